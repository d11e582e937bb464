extension MultipartParser.PartHead {
    /// The boundary of a `multipart/mixed` part, or nil for any other part.
    ///
    /// Such a part holds several files of one field, nested: what RFC 2388 §4.2 described, RFC 7578 §4.3
    /// deprecates, and `curl -F 'f=@a,b'` and old clients still send. The parser bounds the whole part by
    /// ``MultipartParser/Limits/maxFileBytes`` (not `maxFieldBytes`); read the files inside with
    /// ``MultipartParser/init(mixedIn:limits:mode:)``, or let ``MultipartParts/Part/mixedParts(limits:mode:)`` and
    /// the spooler do it.
    ///
    /// ```swift
    /// // Content-Disposition: form-data; name="files"
    /// // Content-Type: multipart/mixed; boundary=BbC04y
    /// head.mixedBoundary  // MultipartBoundary("BbC04y")
    /// ```
    public var mixedBoundary: MultipartBoundary? {
        guard !isFile, let contentType, contentType.utf8.count > 15,
            let type = try? ContentType(parsing: contentType), type.mediaType == "multipart/mixed"
        else { return nil }
        return try? MultipartBoundary(contentType: contentType)
    }
}

extension MultipartParser {
    /// A parser for the files inside a `multipart/mixed` part of a form: its body split on the part's
    /// ``PartHead/mixedBoundary``.
    ///
    /// The parts inside carry `Content-Disposition: attachment` (or `file`) with a filename and no name, as RFC 2388
    /// §4.2 has it: this parser accepts any disposition type there and gives every part the outer field's name, so
    /// that each reads as a file of that field. Depth 1: a `multipart/mixed` part inside is a part like any other.
    ///
    /// - Throws: ``MultipartError/Code/invalidContentType`` when `head` is not a `multipart/mixed` part with a
    ///   boundary; ``MultipartError/Code/invalidLimit`` for a limit below 1.
    public init(mixedIn head: PartHead, limits: Limits = .default, mode: Mode = .strict) throws {
        guard let boundary = head.mixedBoundary else {
            throw MultipartError(
                code: .invalidContentType,
                message:
                    "part \(head.index + 1) (\(head.name.debugDescription)) is not multipart/mixed with a boundary: "
                    + (head.contentType.map(\.debugDescription) ?? "no Content-Type"),
                partIndex: head.index)
        }
        try self.init(boundary: boundary, limits: limits, mode: mode)
        engine.mixedFieldName = head.name
    }
}
