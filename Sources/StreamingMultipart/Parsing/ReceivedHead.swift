/// What a ``ReceivedHead`` knows besides its bytes: where the parts of its `Content-Disposition` lie. Plain values
/// only, so that freeing a head releases nothing else.
struct ReceivedHeadInfo {
    var index: Int
    var fieldCount = 0
    var dispositionField = -1
    var contentTypeField = -1
    /// `name`, `filename` and `filename*`, relative to the start of the `Content-Disposition` value.
    var name: HeaderValueParser.Value?
    var filename: HeaderValueParser.Value?
    var filenameStar: HeaderValueParser.Value?
    /// The disposition type, and whether it is `form-data` in any case; the parser refuses another type or, in
    /// lenient mode, reads it as `form-data`.
    var type: Range<Int> = 0..<0
    var isFormData = false
}

/// A part's head as the parser received it, in one allocation (a ``PackedRecord``): a table of field ends, then each
/// field's name and value bytes (folded values joined, values trimmed, repeats lenient mode dropped left out).
///
/// The parser checks every line and the whole `Content-Disposition` before it makes one (``MultipartParser``'s
/// `+Headers`), so reading a property here decodes bytes known to be valid. Immutable once the parser hands it out,
/// which is what lets ``MultipartParser/PartHead`` be `Sendable`.
///
/// Table layout: `2 × fieldCount` integers (for field `i`, the end of its name and the end of its value, counted
/// from the start of the bytes; each name starts where the previous value ended).
struct ReceivedHead {
    private let record: PackedRecord<ReceivedHeadInfo>

    /// A header field as the parser checked it: offsets from the start of the block's lines.
    struct Field {
        /// Where its line starts, and its colon.
        var start: Int
        var colon: Int
        /// Where its line's content ends (before the line break), and where the next line starts.
        var end: Int
        var next: Int
        var kind: Kind
    }

    /// A head with the fields of `lines`: complete header lines, each ending in LF (CRLF in strict mode), none
    /// empty, each a `name:value` line or a continuation of the one before; `fields` are the `name:value` lines,
    /// as the parser found them, so that only continuation lines are searched here. The first
    /// `dropping.dispositions` `Content-Disposition` and `dropping.contentTypes` `Content-Type` fields are left out.
    ///
    /// - Throws: what ``ContentDisposition``'s parsing throws for the `Content-Disposition` field, which must be
    ///   there.
    static func make(
        index: Int, lines: Span<UInt8>, fields: Span<Field>,
        dropping: (dispositions: Int, contentTypes: Int),
        maxParameters: Int
    ) throws -> ReceivedHead {
        let fieldCount = fields.count - dropping.dispositions - dropping.contentTypes
        let record = try PackedRecord<ReceivedHeadInfo>.make(tableCount: 2 * fieldCount, byteCapacity: lines.count) {
            table, bytes in
            var info = ReceivedHeadInfo(index: index, fieldCount: fieldCount)
            var kept = 0
            var dropping = dropping
            for index in fields.indices {
                let field = fields[index]
                if field.kind == .contentDisposition, dropping.dispositions > 0 {
                    dropping.dispositions -= 1
                    continue  // and its continuation lines
                }
                if field.kind == .contentType, dropping.contentTypes > 0 {
                    dropping.contentTypes -= 1
                    continue
                }
                let line = lines.extracting(field.start..<field.end)
                let colon = field.colon - field.start
                bytes.append(copying: line.extracting(..<colon))
                table[2 * kept] = bytes.count
                bytes.append(copying: line.extracting(HeaderValueParser.trimmed(line, (colon + 1)..<line.count)))
                // Continuation lines, up to the next field: each joined to the value with one space.
                let continuationsEnd = index + 1 < fields.count ? fields[index + 1].start : lines.count
                var lineStart = field.next
                while lineStart < continuationsEnd {
                    let newline = ByteSearch.firstIndex(of: 0x0A, in: lines, from: lineStart)!  // every line ends in LF
                    let end = lines[newline - 1] == 0x0D ? newline - 1 : newline  // a continuation is never empty
                    let line = lines.extracting(lineStart..<end)
                    lineStart = newline + 1
                    let piece = line.extracting(HeaderValueParser.trimmed(line, 0..<line.count))
                    guard !piece.isEmpty else { continue }
                    if bytes.count > table[2 * kept] { bytes.append(UInt8(ascii: " ")) }
                    bytes.append(copying: piece)
                }
                table[2 * kept + 1] = bytes.count
                if field.kind == .contentDisposition { info.dispositionField = kept }
                if field.kind == .contentType { info.contentTypeField = kept }
                kept += 1
            }
            let disposition = bytes.span.extracting(
                table[2 * info.dispositionField]..<table[2 * info.dispositionField + 1])
            var others: [ContentDisposition.OtherParameter] = []  // read again by `disposition` when asked for
            let layout = try ContentDisposition.layout(of: disposition, maxParameters: maxParameters, others: &others)
            info.isFormData = HeaderValueParser.name(disposition.extracting(layout.type), is: "form-data")
            info.type = layout.type
            info.name = layout.name
            info.filename = layout.filename
            info.filenameStar = layout.filenameStar
            return info
        }
        return ReceivedHead(record: record)
    }

    /// The head's fixed fields.
    var info: ReceivedHeadInfo { record.value }

    /// The headers the parser treats specially.
    enum Kind {
        case contentDisposition, contentType, other

        init(_ name: Span<UInt8>) {
            if ByteSearch.equal(name, "Content-Disposition") {  // the spelling every client sends, checked first
                self = .contentDisposition
            } else if ByteSearch.equal(name, "Content-Type") {
                self = .contentType
            } else if HeaderValueParser.name(name, is: "content-disposition") {
                self = .contentDisposition
            } else if HeaderValueParser.name(name, is: "content-type") {
                self = .contentType
            } else {
                self = .other
            }
        }
    }

    /// Calls `body` with the name and value bytes of field `field`.
    func withField<Result>(
        _ field: Int, _ body: (_ name: Span<UInt8>, _ value: Span<UInt8>) throws -> Result
    ) rethrows -> Result {
        try record.withContents { table, bytes in
            let nameStart = field == 0 ? 0 : table[2 * field - 1]
            let nameEnd = table[2 * field]
            return try body(bytes.extracting(nameStart..<nameEnd), bytes.extracting(nameEnd..<table[2 * field + 1]))
        }
    }

    /// Calls `body` with the `Content-Disposition` value's bytes.
    func withDisposition<Result>(_ body: (Span<UInt8>) throws -> Result) rethrows -> Result {
        try withField(info.dispositionField) { _, value in try body(value) }
    }

    var headers: MultipartHeaders {
        MultipartHeaders(
            (0..<info.fieldCount).map { field in
                withField(field) { name, value in
                    MultipartHeaders.Field(name: Self.headerName(name), value: String(decodingUTF8: value))
                }
            })
    }

    var disposition: ContentDisposition {
        withDisposition { bytes in
            // Checked with the parser's limit when the part arrived; read again in full, other parameters included.
            var others: [ContentDisposition.OtherParameter] = []
            let layout = try! ContentDisposition.layout(of: bytes, maxParameters: .max, others: &others)
            var disposition = ContentDisposition(layout, others: others, in: bytes)
            if !info.isFormData { disposition.type = "form-data" }  // lenient mode's reading
            return disposition
        }
    }

    var name: String { browserParameter(info.name) ?? "" }
    var filename: String? { browserParameter(info.filename) }
    var filenameStar: String? {
        guard let value = info.filenameStar else { return nil }
        return withDisposition { try! ContentDisposition.decodeExtendedValue(value.decoded(in: $0)) }  // checked
    }
    var isFile: Bool { info.filename != nil || info.filenameStar != nil }
    var contentType: String? {
        let field = info.contentTypeField
        guard field >= 0 else { return nil }
        return withField(field) { _, value in String(decodingUTF8: value) }
    }

    /// Calls `body` with the name's bytes when they are the name itself, as most are (no backslash, no `%`); nil
    /// when they are not, or the head has no name.
    func withPlainName<Result>(_ body: (Span<UInt8>) throws -> Result) rethrows -> Result? {
        guard let value = info.name, !value.hasEscapes else { return nil }
        return try withDisposition { disposition in
            let bytes = disposition.extracting(value.range)
            guard ByteSearch.firstIndex(of: UInt8(ascii: "%"), in: bytes) == nil else { return nil }
            return try body(bytes)
        }
    }

    private func browserParameter(_ value: HeaderValueParser.Value?) -> String? {
        guard let value else { return nil }
        return withDisposition { disposition in
            // Most values hold no backslash and no `%`: one string straight from the bytes, read once.
            if !value.hasEscapes,
                ByteSearch.firstIndex(of: UInt8(ascii: "%"), in: disposition.extracting(value.range)) == nil
            {
                return String(decodingUTF8: disposition.extracting(value.range))
            }
            return ContentDisposition.decodeBrowserEscapes(value.decoded(in: disposition))
        }
    }

    /// Whether `other` is this head itself (not merely equal).
    func isIdentical(to other: ReceivedHead) -> Bool { record === other.record }

    /// Browsers' spellings of the common names share one string; other names are copied.
    private static func headerName(_ name: Span<UInt8>) -> MultipartHeaders.Name {
        if ByteSearch.equal(name, "Content-Disposition") { return .contentDisposition }
        if ByteSearch.equal(name, "Content-Type") { return .contentType }
        return MultipartHeaders.Name(String(decodingUTF8: name))
    }
}
