public import Logging

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
///     logger.log(level: error.logLevel, "upload refused: \(error)")  // the underlying error, paths included
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

    /// How loud a log line about it should be: `error` for the server's own failure (500), `warning` for the rest of
    /// 5xx (full, busy, out of disk), `info` for the client's mistakes (4xx).
    public var logLevel: Logger.Level {
        switch response.status {
        case 500: .error
        case 500...: .warning
        default: .info
        }
    }

    /// The status, the code, what the client was told, and the underlying error (paths included: for the log).
    public var description: String {
        "\(response.status) \(response.code) (\"\(response.message)\"): \(underlying)"
    }
}
