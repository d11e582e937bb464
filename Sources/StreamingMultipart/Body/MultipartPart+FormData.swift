extension MultipartPart {
    /// Checks that the part's headers are what the strict parser reads as a form-data part (RFC 7578 §4.2), with
    /// the parser's default limits: the builder sends nothing its own parser would refuse.
    ///
    /// - Header names are RFC 9110 tokens and values hold no CR, LF or NUL.
    /// - Exactly one `Content-Disposition`, of type `form-data`, with a `name` parameter, each parameter once and at
    ///   most ``ContentDisposition/defaultMaxParameters`` of them; at most one `Content-Type`.
    /// - At most ``MultipartParser/Limits/maxHeadersPerPart`` headers in at most
    ///   ``MultipartParser/Limits/maxHeaderBytesPerPart`` bytes.
    ///
    /// - Throws: ``MultipartError/Code/invalidHeader``, ``MultipartError/Code/missingContentDisposition``,
    ///   ``MultipartError/Code/duplicateHeader``, ``MultipartError/Code/missingName`` or
    ///   ``MultipartError/Code/limitExceeded``, each naming part `partIndex`.
    func validateFormData(partIndex: Int) throws {
        try headers.validate(partIndex: partIndex)
        let limits = MultipartParser.Limits.default
        guard headers.count <= limits.maxHeadersPerPart else {
            throw MultipartError(
                code: .limitExceeded,
                message: "part \(partIndex + 1) has \(headers.count) headers, more than the parser's maxHeadersPerPart "
                    + "(\(limits.maxHeadersPerPart))", partIndex: partIndex, limit: "maxHeadersPerPart")
        }
        let headerBytes = headers.encoded.count
        guard headerBytes <= limits.maxHeaderBytesPerPart else {
            throw MultipartError(
                code: .limitExceeded,
                message: "the headers of part \(partIndex + 1) take \(headerBytes) bytes, more than the parser's "
                    + "maxHeaderBytesPerPart (\(limits.maxHeaderBytesPerPart))", partIndex: partIndex,
                limit: "maxHeaderBytesPerPart")
        }
        let dispositions = headers.values(for: .contentDisposition)
        guard let value = dispositions.first else {
            throw MultipartError(
                code: .missingContentDisposition,
                message: "part \(partIndex + 1) has no Content-Disposition header (RFC 7578 §4.2)", partIndex: partIndex
            )
        }
        for (name, count) in [("Content-Disposition", dispositions.count), ("Content-Type", contentTypeCount)]
        where count > 1 {
            throw MultipartError(
                code: .duplicateHeader, message: "part \(partIndex + 1) has \(count) \(name) headers; a part has one",
                partIndex: partIndex)
        }
        let disposition: ContentDisposition
        do {
            disposition = try ContentDisposition(parsing: value)
        } catch var error as MultipartError {
            error.message = "part \(partIndex + 1): \(error.message)"
            error.partIndex = partIndex
            throw error
        }
        guard disposition.type == "form-data" else {
            throw MultipartError(
                code: .invalidHeader,
                message:
                    "the Content-Disposition type of part \(partIndex + 1) is \(String(reflecting: disposition.type)), "
                    + "not form-data (RFC 7578 §4.2)", partIndex: partIndex)
        }
        guard disposition.name != nil else {
            throw MultipartError(
                code: .missingName,
                message: "the Content-Disposition of part \(partIndex + 1) has no name (RFC 7578 §4.2)",
                partIndex: partIndex)
        }
    }

    private var contentTypeCount: Int { headers.values(for: .contentType).count }
}
