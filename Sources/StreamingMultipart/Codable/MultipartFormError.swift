public import Logging
import Metrics

/// A request's form could not be read or decoded: the answer to send (``response``) and the whole story for the log
/// (``underlying``).
///
/// Thrown by ``MultipartSpooler/withDecodedForm(as:_:contentType:contentEncoding:decoder:isolation:_:)`` for
/// everything that failed before the route's own code ran; the server integrations turn it into their framework's
/// answer (`StreamingMultipartHummingbird`, `StreamingMultipartVapor`).
///
/// ```swift
/// do {
///     return try await spooler.withDecodedForm(as: Upload.self, body, contentType: contentType) { upload in … }
/// } catch let error as MultipartFormError {
///     error.report(to: logger)  // one line: the status, the code, the limit, the underlying error (paths included)
///     return Response(status: error.response.status, json: error.response)  // what the client may read
/// }
/// ```
public struct MultipartFormError: Error, CustomStringConvertible {
    /// The status, code, client-safe message and field to answer with.
    public var response: MultipartErrorResponse
    /// What failed: a ``MultipartError``, a `DecodingError`, the body's own error or a `CancellationError`.
    public var underlying: any Error

    /// The answer for `error` (``MultipartErrorResponse/init(for:keyStrategy:)``); a `MultipartFormError` is kept
    /// as it is.
    public init(_ error: any Error, keyStrategy: MultipartFormKeyStrategy = .brackets) {
        if let error = error as? MultipartFormError {
            self = error
        } else {
            self.init(response: MultipartErrorResponse(for: error, keyStrategy: keyStrategy), underlying: error)
        }
    }

    public init(response: MultipartErrorResponse, underlying: any Error) {
        self.response = response
        self.underlying = underlying
    }

    /// Seconds a client should wait before trying again, for the `Retry-After` header: 1 for 429 and 503 (the
    /// server is full for now), nil otherwise.
    public var retryAfterSeconds: Int? { [429, 503].contains(response.status) ? 1 : nil }

    /// How loud a log line about it should be: `error` for a refusal on the server's side (5xx: its own failure, a
    /// full disk, no room for another upload), `info` for the client's mistakes (4xx), below the warnings an
    /// operator is paged for.
    public var logLevel: Logger.Level { response.status >= 500 ? .error : .info }

    /// The limit the form went past, by its name (``MultipartError/limit``: `maxFiles`, `maxFileBytes`), for a
    /// 413; nil for any other refusal.
    public var limit: String? {
        switch underlying {
        case let error as MultipartError:
            return error.limit
        case let error as DecodingError:
            switch error {
            case .keyNotFound(_, let context), .valueNotFound(_, let context), .typeMismatch(_, let context),
                .dataCorrupted(let context):
                return (context.underlyingError as? MultipartError)?.limit
            @unknown default:
                return nil
            }
        default:
            return nil
        }
    }

    /// Reports the refusal: logs it in one line at ``logLevel`` (`form refused`, with the status, the code, the
    /// limit past one, the field and the offset as metadata, and the whole error, paths included, under
    /// `multipart.error`), and counts it in ``MultipartMetrics/uploadsRefused`` by `status` and `code` (with the
    /// metrics factory in effect now). The server products report each refusal they answer this way, once, with the
    /// request's logger (its request id).
    ///
    /// ```swift
    /// } catch let error as MultipartFormError {
    ///     error.report(to: logger)  // info: form refused multipart.status=413 multipart.code=limitExceeded …
    ///     throw error
    /// }
    /// ```
    public func report(to logger: Logger) {
        // The client's text (a field's name, in the field and in the error's sentence) with its line breaks and
        // other control characters escaped, so that no client forges a line of a log that writes lines.
        func escaped(_ text: String) -> String { String(text.debugDescription.dropFirst().dropLast()) }
        var metadata: Logger.Metadata = [
            "multipart.status": "\(response.status)", "multipart.code": "\(response.code)",
            "multipart.error": "\(escaped("\(underlying)"))",
        ]
        if let limit { metadata["multipart.limit"] = "\(limit)" }
        if let field = response.field { metadata["multipart.field"] = "\(escaped(field))" }
        if let offset = response.offset { metadata["multipart.offset"] = "\(offset)" }
        logger.log(level: logLevel, "form refused", metadata: metadata)
        Counter(
            label: MultipartMetrics.uploadsRefused,
            dimensions: [("status", "\(response.status)"), ("code", response.code)]
        ).increment()
    }

    /// The status, the code, what the client was told, and the underlying error (paths included: for the log).
    public var description: String {
        "\(response.status) \(response.code) (\"\(response.message)\"): \(underlying)"
    }
}
