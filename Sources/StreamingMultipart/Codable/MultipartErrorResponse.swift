/// What a server answers when reading or decoding a form failed: the HTTP status, a stable code, a message fit for
/// the client (never a path of the server's or Swift's own wording), and the field concerned, when one is.
///
/// Made from any error the spooler, the parts or the decoder throw:
///
/// | error | status | code |
/// |---|---|---|
/// | ``MultipartError`` | ``MultipartError/httpStatus`` | its ``MultipartError/code`` |
/// | `DecodingError` from a limit of the form or the parser | 413 | `limitExceeded` |
/// | a field the type needs and the form lacks | 422 | `missingField` |
/// | text that does not read as the field's type, a file where text is expected, a name sent twice | 422 | `invalidField` |
/// | a `DecodingError` a type's own `init(from:)` threw | 422 | `invalidField` (its text is not sent) |
/// | `CancellationError` | 503 | `cancelled` |
/// | anything else | 500 | `internalError` |
///
/// ```swift
/// do {
///     let upload = try await spooler.withSpooledForm(body, contentType: contentType) { form in
///         try MultipartFormDecoder().decode(Upload.self, from: form)
///     }
///     …
/// } catch {
///     logger.error("upload failed: \(error)")                  // the whole story, paths included
///     let answer = MultipartErrorResponse(for: error)
///     return Response(status: answer.status, json: answer)      // {"error":{"code":…,"message":…,"field":…}}
/// }
/// ```
///
/// Encoded (`Encodable`), it is the JSON body `{"error": {"code": …, "message": …, "field": …, "offset": …}}`,
/// the keys without a value left out.
public struct MultipartErrorResponse: Sendable, Hashable, Encodable {
    /// The HTTP status to answer with.
    public var status: Int
    /// A stable name for the failure: a ``MultipartError/Code`` name, or `internalError`.
    public var code: String
    /// What was wrong, in words fit to send to the client.
    public var message: String
    /// The field concerned, named as the client sends it (`items[0][id]`), when the failure is one field's.
    public var field: String?
    /// The byte offset in the body where reading it failed, when there is one.
    public var offset: Int64?

    /// The answer for `error`.
    ///
    /// - Parameters:
    ///   - error: what the spooler, the parts or the decoder threw.
    ///   - keyStrategy: how the form names nested fields, to name the ``field`` the way the client sent it: the
    ///     decoder's ``MultipartFormDecoder/keyStrategy``.
    public init(for error: any Error, keyStrategy: MultipartFormKeyStrategy = .brackets) {
        switch error {
        case let error as MultipartError:
            self.init(error)
        case let error as DecodingError:
            self.init(error, keyStrategy: keyStrategy)
        case is CancellationError:
            self.init(MultipartError(code: .cancelled, message: "cancelled"))
        default:
            self.init(status: 500, code: "internalError", message: "the server could not read or store the upload")
        }
    }

    public init(status: Int, code: String, message: String, field: String? = nil, offset: Int64? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.offset = offset
    }

    private init(_ error: MultipartError, field: String? = nil) {
        let offset = (400..<500).contains(error.httpStatus) ? error.offset : nil
        self.init(
            status: error.httpStatus, code: error.code.name, message: error.clientMessage, field: field, offset: offset)
    }

    private init(_ error: DecodingError, keyStrategy: MultipartFormKeyStrategy) {
        let context: DecodingError.Context
        var path: [any CodingKey]
        switch error {
        case .keyNotFound(let key, let found):
            context = found
            path = found.codingPath + [key]
        case .valueNotFound(_, let found), .typeMismatch(_, let found), .dataCorrupted(let found):
            context = found
            path = found.codingPath
        @unknown default:
            self.init(status: 422, code: MultipartError.Code.invalidField.name, message: "the form does not decode")
            return
        }
        let field = path.isEmpty ? nil : FormKeyPath(codingPath: path).name(keyStrategy)
        if let underlying = context.underlyingError as? MultipartError {
            // The decoder's own sentence, or a limit of the form's: both fit for the client.
            self.init(underlying, field: field)
        } else {
            // A type's own init(from:) threw it: its description is Swift's, written for the developer.
            let message = field.map { "the field \($0.debugDescription) does not hold a value this form takes" }
            self.init(
                status: 422, code: MultipartError.Code.invalidField.name,
                message: message ?? "the form does not hold what this route takes", field: field)
        }
    }

    private enum CodingKeys: String, CodingKey {
        case error
    }

    private enum ErrorKeys: String, CodingKey {
        case code, message, field, offset
    }

    public func encode(to encoder: any Encoder) throws {
        var outer = encoder.container(keyedBy: CodingKeys.self)
        var inner = outer.nestedContainer(keyedBy: ErrorKeys.self, forKey: .error)
        try inner.encode(code, forKey: .code)
        try inner.encode(message, forKey: .message)
        try inner.encodeIfPresent(field, forKey: .field)
        try inner.encodeIfPresent(offset, forKey: .offset)
    }
}
