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
    ///
    /// Inlinable, as the parts' iterators are, so that the loop over parts and chunks is specialized for the caller's
    /// chunk type; each field is then handed to a collector that is not generic.
    @inlinable
    public func decode<T: Decodable, Base>(
        _ type: T.Type, from parts: MultipartParts<Base>, maxBytes: Int = 8 << 20,
        isolation actor: isolated (any Actor)? = #isolation
    ) async throws -> T {
        var collector = FormFieldCollector(maxBytes: maxBytes)
        do {
            var iterator = parts.makeAsyncIterator()
            while let part = try await iterator.next(isolation: actor) {
                try collector.begin(part.head)
                var body = part.body.makeAsyncIterator()
                while let chunk = try await body.next(isolation: actor) { try collector.append(chunk) }
                try collector.finish()
            }
        } catch let error as MultipartError {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [], debugDescription: error.message, underlyingError: error))
        }
        return try decode(type, from: collector.form)
    }
}

/// The text fields ``MultipartFormDecoder/decode(_:from:maxBytes:isolation:)`` collects, under its byte budget: the
/// part of that loop that need not be generic.
@usableFromInline
struct FormFieldCollector {
    let maxBytes: Int
    /// What the budget has left.
    private var left: Int
    private var fields: [SpooledForm.Field] = []
    /// The field begun: its name, part index and `Content-Type`.
    private var name = ""
    private var partIndex = -1
    private var contentType: String?
    /// The field begun's bytes so far; one buffer for every field, its capacity kept.
    private var value: [UInt8] = []

    @usableFromInline
    init(maxBytes: Int) {
        self.maxBytes = maxBytes
        left = maxBytes
    }

    /// Takes the next part's head.
    ///
    /// - Throws: `DecodingError.typeMismatch` for a file (or a multipart/mixed part of files), and
    ///   ``MultipartError/Code/limitExceeded`` when the name alone passes the budget.
    @usableFromInline
    mutating func begin(_ head: MultipartParser.PartHead) throws {
        if head.isFile || head.mixedBoundary != nil {
            let what =
                head.isFile
                ? "is a file (\(head.filename.map(\.debugDescription) ?? ""))" : "holds files (multipart/mixed)"
            throw DecodingError.typeMismatch(
                SpooledFile.self,
                .init(
                    codingPath: [],
                    debugDescription: "the field \(head.name.debugDescription) \(what); spool the form to decode files"
                ))
        }
        name = head.name
        partIndex = head.index
        contentType = head.contentType
        value.removeAll(keepingCapacity: true)
        left -= name.utf8.count + MultipartFormDecoder.fieldOverhead
        guard left >= 0 else { throw pastBudget() }
    }

    /// Adds a chunk of the field begun.
    ///
    /// - Throws: ``MultipartError/Code/limitExceeded`` when the fields pass the budget.
    @usableFromInline
    mutating func append(_ chunk: ArraySlice<UInt8>) throws {
        guard chunk.count <= left else { throw pastBudget() }
        left -= chunk.count
        value += chunk
    }

    /// The error for a field that passes the budget.
    private func pastBudget() -> MultipartError {
        MultipartError(
            code: .limitExceeded,
            message: "the form's fields pass the \(maxBytes) bytes decode(_:from:maxBytes:) holds, at the field "
                + name.debugDescription, partIndex: partIndex)
    }

    /// Keeps the field begun, its value decoded per its charset.
    ///
    /// - Throws: ``MultipartError/Code/unsupportedCharset``.
    @usableFromInline
    mutating func finish() throws {
        guard partIndex >= 0 else { return }
        let text =
            if let contentType, let charset = (try? ContentType(parsing: contentType))?.charset {
                try FieldCharset.decode(value, charset: charset, partIndex: partIndex, name: name)
            } else {
                String(decoding: value, as: UTF8.self)
            }
        fields.append(
            SpooledForm.Field(name: name, value: text, bytes: value, contentType: contentType, partIndex: partIndex))
    }

    @usableFromInline
    var form: SpooledForm { SpooledForm(fields: fields, files: [], charset: nil) }
}
