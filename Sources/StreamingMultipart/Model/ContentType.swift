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
    /// The parameters, names in lower case, values unquoted; the first of a repeated name wins.
    public var parameters: [String: String]

    /// The `charset` parameter, when present.
    public var charset: String? { parameters["charset"] }

    /// Parses a `Content-Type` value with the same tokenizer as `Content-Disposition`.
    ///
    /// - Throws: ``MultipartError/Code/invalidContentType`` for a value without `type/subtype` or with malformed
    ///   parameters.
    public init(parsing value: String) throws {
        let parsed: HeaderValueParser
        do {
            parsed = try HeaderValueParser(value, header: "Content-Type")
        } catch let error as MultipartError {
            throw MultipartError(code: .invalidContentType, message: error.message)
        }
        let slash = parsed.value.firstIndex(of: "/")
        guard let slash, slash != parsed.value.startIndex, parsed.value.index(after: slash) != parsed.value.endIndex
        else {
            throw MultipartError(
                code: .invalidContentType, message: "Content-Type \(String(reflecting: value)) is not type/subtype")
        }
        mediaType = parsed.value.lowercased()
        parameters = Dictionary(parsed.parameters.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    }
}
