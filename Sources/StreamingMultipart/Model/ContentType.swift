/// A parsed `Content-Type` value: the media type and its parameters (RFC 9110 §8.3).
///
/// ```swift
/// let type = try ContentType(parsing: "text/plain; Charset=\"utf-8\"")
/// type.mediaType   // "text/plain"
/// type.charset     // "utf-8"
/// ```
public struct ContentType: Sendable, Hashable {
    /// `type/subtype` in lower case.
    public var mediaType: String
    /// The parameters, names in lower case, values unquoted.
    public var parameters: [String: String]

    /// The `charset` parameter, when present.
    public var charset: String? { parameters["charset"] }

    /// Parses a `Content-Type` value with the same tokenizer as `Content-Disposition`; quoted values read `\"` and
    /// `\\` as RFC 9110 quoted-pairs.
    ///
    /// - Throws: ``MultipartError/Code/invalidContentType`` for a value without `type/subtype`, with malformed
    ///   parameters, or with a parameter given twice (Go's `mime.ParseMediaType` refuses it too: two readers could
    ///   take different ones).
    public init(parsing value: String) throws {
        var parameters: [String: String] = [:]
        let main: String
        do {
            main = try HeaderValueParser.scan(value, header: "Content-Type", backslashes: .escapes) { name, text in
                let lowercased = HeaderValueParser.lowercased(name)
                guard parameters.updateValue(text, forKey: lowercased) == nil else {
                    throw MultipartError(
                        code: .invalidContentType, message: "Content-Type gives the parameter \(lowercased) twice")
                }
            }
        } catch let error as MultipartError {
            throw MultipartError(code: .invalidContentType, message: error.message, cause: error)
        }
        let slash = main.firstIndex(of: "/")
        guard let slash, slash != main.startIndex, main.index(after: slash) != main.endIndex else {
            throw MultipartError(
                code: .invalidContentType, message: "Content-Type \(String(reflecting: value)) is not type/subtype")
        }
        mediaType = main.lowercased()
        self.parameters = parameters
    }
}
