extension MultipartFormDecoder {
    /// What each field costs against `maxBytes` in ``decode(_:from:maxBytes:isolation:)`` beside its name and value:
    /// its record, its text beside its bytes, and its place in the tree, rounded up.
    public static let fieldOverhead = 128

    /// Decodes a form straight from its parts, without spooling: for types whose fields are all text, such as a
    /// search form or a settings page. The fields are collected in memory, at most `maxBytes` in all: each field
    /// counts its value's bytes, its name's, and ``fieldOverhead`` for what holding it costs, so that a flood of
    /// empty fields is bounded as a large one is.
    ///
    /// ```swift
    /// struct Settings: Decodable { var name: String; var tags: [String]; var notify: Bool }
    ///
    /// let parts = try request.body.multipartParts(contentType: contentType)
    /// let settings = try await MultipartFormDecoder().decode(Settings.self, from: parts)
    /// ```
    ///
    /// A form with a file part fails: spool it with ``MultipartSpooler`` and decode the ``SpooledForm``, where files
    /// are on disk.
    ///
    /// - Throws: what ``decode(_:from:)`` throws; `DecodingError.dataCorrupted` with the ``MultipartError`` as its
    ///   `underlyingError` when the body is malformed or its fields pass `maxBytes`
    ///   (``MultipartError/Code/limitExceeded``); `DecodingError.typeMismatch` for a file part.
    public func decode<T: Decodable, Base>(
        _ type: T.Type, from parts: MultipartParts<Base>, maxBytes: Int = 8 << 20,
        isolation actor: isolated (any Actor)? = #isolation
    ) async throws -> T {
        var fields: [SpooledForm.Field] = []
        do {
            var left = maxBytes
            var iterator = parts.makeAsyncIterator()
            while let part = try await iterator.next(isolation: actor) {
                let head = part.head
                if head.isFile || head.mixedBoundary != nil {
                    let what =
                        head.isFile
                        ? "is a file (\(head.filename.map(\.debugDescription) ?? ""))"
                        : "holds files (multipart/mixed)"
                    throw DecodingError.typeMismatch(
                        SpooledFile.self,
                        .init(
                            codingPath: [],
                            debugDescription: "the field \(head.name.debugDescription) \(what); spool the form to "
                                + "decode files"))
                }
                let name = head.name
                func pastBudget() -> MultipartError {
                    MultipartError(
                        code: .limitExceeded,
                        message: "the form's fields pass the \(maxBytes) bytes decode(_:from:maxBytes:) holds, at the "
                            + "field \(name.debugDescription)", partIndex: head.index)
                }
                left -= name.utf8.count + Self.fieldOverhead
                guard left >= 0 else { throw pastBudget() }
                let bytes: [UInt8]
                do {
                    bytes = try await part.body.collect(upTo: left, isolation: actor)
                } catch let error as MultipartError where error.code == .limitExceeded {
                    throw pastBudget()
                }
                left -= bytes.count
                let charset = head.contentType.flatMap { try? ContentType(parsing: $0) }?.charset
                let value = try FieldCharset.decode(bytes, charset: charset, partIndex: head.index, name: name)
                fields.append(
                    SpooledForm.Field(
                        name: name, value: value, bytes: bytes, contentType: head.contentType, partIndex: head.index))
            }
        } catch let error as MultipartError {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [], debugDescription: error.message, underlyingError: error))
        }
        return try decode(type, from: SpooledForm(fields: fields, files: [], charset: nil))
    }
}
