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

/// A part's head as the parser received it, in one allocation: a table of field ends, then each field's name and
/// value bytes (folded values joined, values trimmed, repeats lenient mode dropped left out).
///
/// The parser checks every line and the whole `Content-Disposition` before it makes one (``MultipartParser``'s
/// `+Headers`), so reading a property here decodes bytes known to be valid. Immutable once the parser hands it out,
/// which is what lets ``MultipartParser/PartHead`` be `Sendable`.
///
/// Tail layout: `2 × fieldCount` integers (for field `i`, the end of its name and the end of its value, counted
/// from the start of the byte area; each name starts where the previous value ended), then the bytes.
final class ReceivedHead: ManagedBuffer<ReceivedHeadInfo, Int> {
    /// A head with the fields of `lines`: complete header lines, each ending in LF (CRLF in strict mode), none
    /// empty, each a `name:value` line or a continuation of the one before. `fieldCount` counts the fields kept;
    /// the first `dropping.dispositions` `Content-Disposition` and `dropping.contentTypes` `Content-Type` fields
    /// are left out.
    ///
    /// - Throws: what ``ContentDisposition``'s parsing throws for the `Content-Disposition` field, which must be
    ///   there.
    static func make(
        index: Int, lines: UnsafeBufferPointer<UInt8>, fieldCount: Int,
        dropping: (dispositions: Int, contentTypes: Int),
        maxParameters: Int
    ) throws -> ReceivedHead {
        let created = create(minimumCapacity: 2 * fieldCount + (lines.count + 7) / 8) { _ in
            ReceivedHeadInfo(index: index, fieldCount: fieldCount)
        }
        let head = unsafeDowncast(created, to: ReceivedHead.self)
        var info = ReceivedHeadInfo(index: index, fieldCount: fieldCount)
        try head.withUnsafeMutablePointerToElements { table in
            let bytes = UnsafeMutableRawPointer(table + 2 * fieldCount).assumingMemoryBound(to: UInt8.self)
            var written = 0
            var field = 0
            var dropping = dropping
            var skipsContinuations = false
            var lineStart = 0
            while lineStart < lines.count {
                let newline = ByteSearch.firstIndex(of: 0x0A, in: lines, from: lineStart)!  // every line ends in LF
                let end = newline > lineStart && lines[newline - 1] == 0x0D ? newline - 1 : newline
                let line = UnsafeBufferPointer(rebasing: lines[lineStart..<end])
                lineStart = newline + 1
                if MultipartParser.isBlank(line[0]) {  // a continuation: joined to the value with one space
                    let piece = trimmed(line)
                    guard !skipsContinuations, !piece.isEmpty else { continue }
                    if written > table[2 * field - 2] {
                        bytes[written] = UInt8(ascii: " ")
                        written += 1
                    }
                    copy(piece, to: bytes, at: &written)
                    table[2 * field - 1] = written
                    continue
                }
                let colon = line.firstIndex(of: UInt8(ascii: ":"))!
                let name = UnsafeBufferPointer(rebasing: line[..<colon])
                let kind = Kind(name)
                if kind == .contentDisposition, dropping.dispositions > 0 {
                    dropping.dispositions -= 1
                    skipsContinuations = true
                    continue
                }
                if kind == .contentType, dropping.contentTypes > 0 {
                    dropping.contentTypes -= 1
                    skipsContinuations = true
                    continue
                }
                skipsContinuations = false
                copy(name, to: bytes, at: &written)
                table[2 * field] = written
                copy(trimmed(UnsafeBufferPointer(rebasing: line[(colon + 1)...])), to: bytes, at: &written)
                table[2 * field + 1] = written
                if kind == .contentDisposition { info.dispositionField = field }
                if kind == .contentType { info.contentTypeField = field }
                field += 1
            }
            let valueStart = table[2 * info.dispositionField]
            let disposition = UnsafeBufferPointer(
                start: bytes + valueStart, count: table[2 * info.dispositionField + 1] - valueStart)
            var others: [ContentDisposition.OtherParameter] = []  // read again by `disposition` when asked for
            let layout = try ContentDisposition.layout(of: disposition, maxParameters: maxParameters, others: &others)
            info.isFormData = HeaderValueParser.name(
                UnsafeBufferPointer(rebasing: disposition[layout.type]), is: "form-data")
            info.type = layout.type
            info.name = layout.name
            info.filename = layout.filename
            info.filenameStar = layout.filenameStar
        }
        // Through the pointer: `header`'s accessors check exclusivity at run time, once for every part.
        head.withUnsafeMutablePointerToHeader { $0.pointee = info }
        return head
    }

    /// The head's fixed fields, read without `header`'s run-time exclusivity check.
    var info: ReceivedHeadInfo { withUnsafeMutablePointerToHeader { $0.pointee } }

    /// The headers the parser treats specially.
    enum Kind {
        case contentDisposition, contentType, other

        init(_ name: UnsafeBufferPointer<UInt8>) {
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
        _ field: Int, _ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) throws -> Result
    ) rethrows -> Result {
        let count = info.fieldCount
        return try withUnsafeMutablePointerToElements { table in
            let bytes = UnsafeRawPointer(table + 2 * count).assumingMemoryBound(to: UInt8.self)
            let nameStart = field == 0 ? 0 : table[2 * field - 1]
            let nameEnd = table[2 * field]
            return try body(
                UnsafeBufferPointer(start: bytes + nameStart, count: nameEnd - nameStart),
                UnsafeBufferPointer(start: bytes + nameEnd, count: table[2 * field + 1] - nameEnd))
        }
    }

    /// Calls `body` with the `Content-Disposition` value's bytes.
    func withDisposition<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try withField(info.dispositionField) { _, value in try body(value) }
    }

    var headers: MultipartHeaders {
        MultipartHeaders(
            (0..<info.fieldCount).map { field in
                withField(field) { name, value in
                    MultipartHeaders.Field(name: Self.headerName(name), value: String(decoding: value, as: UTF8.self))
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
        return withField(field) { _, value in String(decoding: value, as: UTF8.self) }
    }

    private func browserParameter(_ value: HeaderValueParser.Value?) -> String? {
        guard let value else { return nil }
        return withDisposition { ContentDisposition.decodeBrowserEscapes(value.decoded(in: $0)) }
    }

    private static func copy(
        _ source: UnsafeBufferPointer<UInt8>, to bytes: UnsafeMutablePointer<UInt8>, at written: inout Int
    ) {
        guard let base = source.baseAddress, !source.isEmpty else { return }
        (bytes + written).update(from: base, count: source.count)
        written += source.count
    }

    private static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[HeaderValueParser.trimmed(bytes, 0..<bytes.count)])
    }

    /// Browsers' spellings of the common names share one string; other names are copied.
    private static func headerName(_ name: UnsafeBufferPointer<UInt8>) -> MultipartHeaders.Name {
        if ByteSearch.equal(name, "Content-Disposition") { return .contentDisposition }
        if ByteSearch.equal(name, "Content-Type") { return .contentType }
        return MultipartHeaders.Name(String(decoding: name, as: UTF8.self))
    }
}
