extension MultipartBoundary {
    /// The longest boundary accepted when parsing. RFC 2046 allows 70 characters; some clients send more.
    public static let maximumParsedLength = 256

    /// Reads the boundary from a `Content-Type` header value such as `multipart/form-data; boundary=xyz`.
    ///
    /// Accepts a quoted or bare boundary, parameter names in any case and whitespace around them. A bare boundary
    /// runs to the next `;`, so boundaries with `(`, `)`, `/`, `:`, `=` or `?` are read as clients send them.
    ///
    /// ```swift
    /// let boundary = try MultipartBoundary(contentType: #"multipart/form-data; Boundary="a b""#)   // "a b"
    /// ```
    ///
    /// - Throws: ``MultipartError/Code/invalidContentType`` for a type that is not `multipart/…`, a malformed
    ///   value, or a parameter given twice (two `boundary` parameters could be read differently by two servers);
    ///   ``MultipartError/Code/invalidBoundary`` for a missing or empty boundary, one longer than
    ///   ``maximumParsedLength``, or one holding a control character.
    public init(contentType: String) throws {
        let parsed = try ContentType(parsing: contentType)
        guard parsed.mediaType.hasPrefix("multipart/") else {
            throw MultipartError(
                code: .invalidContentType,
                message: "Content-Type \(String(reflecting: parsed.mediaType)) is not a multipart type")
        }
        guard let value = parsed.parameters["boundary"] else {
            throw MultipartError(code: .invalidBoundary, message: "Content-Type has no boundary parameter")
        }
        let bytes = value.utf8
        guard !bytes.isEmpty, bytes.count <= Self.maximumParsedLength else {
            throw MultipartError(
                code: .invalidBoundary,
                message: "the boundary must be 1 to \(Self.maximumParsedLength) bytes long, got \(bytes.count)")
        }
        if let index = bytes.firstIndex(where: { $0 < 0x20 || $0 == 0x7F }) {
            throw MultipartError(
                code: .invalidBoundary,
                message: "the boundary holds control byte 0x\(String(bytes[index], radix: 16)) at "
                    + "\(bytes.distance(from: bytes.startIndex, to: index))")
        }
        self.init(unchecked: value)
    }
}
