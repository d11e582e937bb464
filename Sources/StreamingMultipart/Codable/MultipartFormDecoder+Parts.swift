extension MultipartFormDecoder {
    /// What each field costs against `maxMemoryBytes` in ``decode(_:from:maxMemoryBytes:isolation:)`` beside its
    /// name and value: its string's storage and its place in its name's list, rounded up; the spooler's cost of a
    /// part, the same constant.
    static let fieldOverhead = FormCollector.partOverhead

    /// What each new name costs against `maxMemoryBytes` in ``decode(_:from:maxMemoryBytes:isolation:)``, beside
    /// its bytes twice: its place among the names, and each node it adds to the form's tree (`a[b][c]` sent first
    /// adds three; each `a[][b]` adds an item), so that a flood of new or deeply nested names is bounded as a flood
    /// of values is.
    static let nameOverhead = 256

    /// Decodes a form straight from its parts, without spooling: for types whose fields are all text, such as a
    /// search form or a settings page. The fields are collected in memory, at most `maxMemoryBytes` in all (the
    /// spooler's name for the same budget, `MultipartSpooler.Limits.maxMemoryBytes`): each field counts its value's
    /// bytes, its name's, and 128 bytes for what holding it costs, as the spooler counts a part, so that a flood of
    /// empty fields is bounded as a large one is; a name the form has not sent before also counts 256 bytes and its
    /// own bytes twice for its place and for each node it adds to the tree. The budget counts bytes as sent: a
    /// value that is not UTF-8 is also held as text, which takes at most three times its bytes (each byte that is
    /// not UTF-8 becomes U+FFFD, or a character of its charset), so the fields hold at most four times
    /// `maxMemoryBytes`, with the overheads, as the spooler's do.
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
    ///   `underlyingError` when the body is malformed or its fields pass `maxMemoryBytes`
    ///   (``MultipartError/Code/limitExceeded``); `DecodingError.typeMismatch` for a file part.
    ///
    /// Inlinable, as the parts' iterators are, so that pulling chunks is specialized for the caller's chunk type;
    /// the parser's events are read by a collector that is not generic, straight from the parser, with no part or
    /// body iterator between them.
    @inlinable
    public func decode<T: Decodable, Base>(
        _ type: T.Type, from parts: MultipartParts<Base>, maxMemoryBytes: Int = 8 << 20,
        isolation actor: isolated (any Actor)? = #isolation
    ) async throws -> T {
        var collector = FormFieldCollector(maxMemoryBytes: maxMemoryBytes, decoder: self)
        do {
            let driver = parts.makeAsyncIterator().driver
            while try !driver.collectFieldsNow(into: &collector) {
                try await driver.pull(isolation: actor)
            }
            try await driver.finishParts(isolation: actor)
        } catch let error as MultipartError {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [], debugDescription: error.message, underlyingError: error))
        }
        return try collector.decode(type, with: self)
    }
}

extension PartsDriver {
    /// Hands `collector` the events the chunks so far hold; true once the parts ended, false when it needs the next
    /// chunk.
    @usableFromInline
    func collectFieldsNow(into collector: inout FormFieldCollector) throws -> Bool {
        try collector.collect(from: &cursor)
    }
}

/// The text fields ``MultipartFormDecoder/decode(_:from:maxMemoryBytes:isolation:)`` collects into a form's tree, under
/// its byte budget: the part of that loop that need not be generic.
@usableFromInline
struct FormFieldCollector {
    let maxMemoryBytes: Int
    /// What the budget has left.
    private var left: Int
    private var builder: FormTreeBuilder
    /// The field begun: where its value goes, its part index and `Content-Type`.
    private var place: FormTreeBuilder.Place?
    /// The tree's structure already counted against the budget.
    private var structureCounted = 0
    private var partIndex = -1
    private var contentType: String?
    /// The field begun's bytes: while they are one slice of the parser's chunk, that slice (no copy); once a second
    /// slice comes, or before the next chunk, gathered in `value`, one buffer for every field, its capacity kept.
    private var slice: ArraySlice<UInt8> = []
    private var value: [UInt8] = []
    private var gathers = false
    /// The value of the form's first `_charset_` field, once it came.
    private var formCharset: String?
    /// The fields without a charset of their own read (as UTF-8) before `_charset_` came: read again in its charset
    /// when it is not UTF-8, so that the rule is the spooler's (``FieldCharset``), wherever `_charset_` stands.
    private var readBeforeFormCharset: [(address: FormTreeBuilder.TextAddress, partIndex: Int)] = []

    @usableFromInline
    init(maxMemoryBytes: Int, decoder: MultipartFormDecoder) {
        self.maxMemoryBytes = maxMemoryBytes
        left = maxMemoryBytes
        builder = FormTreeBuilder(keyStrategy: decoder.keyStrategy, limits: decoder.limits)
    }

    /// Reads the events the cursor has; true once the close delimiter came (or the source ended).
    mutating func collect(from cursor: inout PartsCursor) throws -> Bool {
        while let event = try cursor.nextEvent() {
            switch consume event {
            case .partHeaders(let head): try begin(head)
            case .bodyBytes(let bytes): try append(bytes.arraySlice)  // lent bytes copied: fields are short
            case .partEnd: try finish()
            case .end: return true
            }
        }
        if cursor.sourceEnded { return true }
        // The next chunk may go into the parser's buffer in place: a slice held now would make it copy.
        gather()
        return false
    }

    /// Takes the next part's head.
    ///
    /// - Throws: `DecodingError.typeMismatch` for a file (or a multipart/mixed part of files);
    ///   ``MultipartError/Code/limitExceeded`` when the name alone passes the budget or the form's limits.
    private mutating func begin(_ head: MultipartParser.PartHead) throws {
        partIndex = head.index
        contentType = head.contentType
        if head.isFile || (contentType != nil && head.mixedBoundary != nil) {
            let what =
                head.isFile
                ? "is a file (\(head.filename.map(\.debugDescription) ?? ""))" : "holds files (multipart/mixed)"
            throw DecodingError.typeMismatch(
                SpooledFile.self,
                .form(
                    [], .invalidField, "the field \(head.name.debugDescription) \(what), and this form takes no files"))
        }
        let place =
            try head.withPlainName { [partIndex] in try builder.place(plain: $0, partIndex: partIndex) }
            ?? builder.place(head.name, partIndex: partIndex)
        self.place = place
        slice = []
        gathers = false
        left -= place.name.utf8.count + MultipartFormDecoder.fieldOverhead + builder.structureBytes - structureCounted
        structureCounted = builder.structureBytes
        guard left >= 0 else { throw pastBudget() }
    }

    /// Adds bytes of the field begun.
    ///
    /// - Throws: ``MultipartError/Code/limitExceeded`` when the fields pass the budget.
    private mutating func append(_ bytes: consuming ArraySlice<UInt8>) throws {
        guard bytes.count <= left else { throw pastBudget() }
        left -= bytes.count
        if !gathers && slice.isEmpty {
            slice = bytes
        } else {
            gather()
            value += bytes
        }
    }

    /// Moves the field's slice into `value`.
    private mutating func gather() {
        guard !gathers, place != nil else { return }
        value.removeAll(keepingCapacity: true)
        value += slice
        slice = []
        gathers = true
    }

    /// The error for a field that passes the budget.
    private func pastBudget() -> MultipartError {
        MultipartError(
            code: .limitExceeded,
            message: "the form's fields pass the \(maxMemoryBytes) bytes decode(_:from:maxMemoryBytes:) holds "
                + "(maxMemoryBytes), at the field " + (place?.name ?? "").debugDescription, partIndex: partIndex,
            limit: "maxMemoryBytes")
    }

    /// Adds the field begun to the tree, its value decoded per its charset.
    ///
    /// - Throws: ``MultipartError/Code/unsupportedCharset``; ``MultipartError/Code/limitExceeded`` when its list is
    ///   full.
    private mutating func finish() throws {
        guard let place else { return }
        self.place = nil
        var bytes: ArraySlice<UInt8> = []
        if gathers { bytes = value[...] } else { swap(&bytes, &slice) }
        if formCharset == nil && place.name == FieldCharset.formCharsetField {
            formCharset = String(decodingUTF8: bytes.span)
            try readAgainInFormCharset()
        }
        let charset = FieldCharset.ofPart(contentType: contentType) ?? formCharset
        let text =
            if FieldCharset.isUTF8(charset) {
                String(decodingUTF8: bytes.span)
            } else {
                try FieldCharset.decode(Array(bytes), charset: charset, partIndex: partIndex, name: place.name)
            }
        let bytesAsSent = text.utf8Equals(bytes.span) ? nil : Array(bytes)
        let address = try builder.add(text: text, bytesAsSent: bytesAsSent, at: place, partIndex: partIndex)
        if charset == nil { readBeforeFormCharset.append((address, partIndex)) }
    }

    /// Reads the fields that came before `_charset_` (just come) again in its charset, when it is not UTF-8.
    ///
    /// - Throws: ``MultipartError/Code/unsupportedCharset``.
    private mutating func readAgainInFormCharset() throws {
        defer { readBeforeFormCharset = [] }
        guard let formCharset, !FieldCharset.isUTF8(formCharset) else { return }
        for (address, partIndex) in readBeforeFormCharset {
            let bytes = builder.bytes(at: address)
            let text = try FieldCharset.decode(
                bytes, charset: formCharset, partIndex: partIndex, name: builder.name(at: address))
            builder.replaceText(at: address, with: text, bytesAsSent: Array(text.utf8) == bytes ? nil : bytes)
        }
    }

    /// The value the fields collected hold.
    @usableFromInline
    func decode<T: Decodable>(_ type: T.Type, with decoder: MultipartFormDecoder) throws -> T {
        try decoder.decode(type, root: builder.tree())
    }
}
