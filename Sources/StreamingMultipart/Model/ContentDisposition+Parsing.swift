extension ContentDisposition {
    /// The most parameters ``init(parsing:maxParameters:)`` reads by default, as
    /// ``MultipartParser/Limits/maxParametersPerHeader`` does.
    public static let defaultMaxParameters = 16

    /// Parses a `Content-Disposition` value (RFC 7578 §4.2, RFC 6266).
    ///
    /// Parameters are tokenized, not split: quoted strings keep `;` and `=`, names compare in any case, and a
    /// parameter given twice is an error (two readers could take different ones). `name` and `filename` are
    /// decoded the way browsers encode them (`%22` → `"`, `%0D` → CR, `%0A` → LF, nothing else); `filename*` (RFC 5987:
    /// `UTF-8''%E2%9C%93.txt`, UTF-8 or ISO-8859-1) is decoded into ``filenameStar``.
    ///
    /// Backslashes: browsers never escape them, so a backslash is first read as a literal character, and
    /// `name="a\"` is the name `a\`. Only when the value does not parse that way (`filename="my \"best\".jpg"`,
    /// as Go's `CreateFormFile` and `curl --form-escape` send it) is it read again with `\"` and `\\` as escapes.
    /// A value that parses both ways is read the browsers' way: `name="a\\b"` is `a\\b`.
    ///
    /// ```swift
    /// let disposition = try ContentDisposition(parsing: #"form-data; name="photo"; filename="C:\pics\a.jpg""#)
    /// disposition.name           // "photo"
    /// disposition.filename       // "C:\pics\a.jpg"
    /// disposition.safeFilename   // "a.jpg"
    /// ```
    ///
    /// - Parameters:
    ///   - value: the header's value, without the `Content-Disposition:` name.
    ///   - maxParameters: the most parameters read; more is an error, so that a hostile header costs bounded work.
    /// - Throws: ``MultipartError/Code/invalidHeader`` for a malformed value, a parameter given twice, or a
    ///   `filename*` with a bad `%` escape or an unknown charset; ``MultipartError/Code/limitExceeded`` for more
    ///   than `maxParameters` parameters.
    public init(parsing value: String, maxParameters: Int = defaultMaxParameters) throws {
        self = try value.withUTF8Span { bytes in
            var others: [OtherParameter] = []
            let layout = try Self.layout(of: bytes, maxParameters: maxParameters, others: &others)
            return Self(layout, others: others, in: bytes)
        }
    }

    /// Where the type and each parameter of a parsed value lie in its bytes. The one reading of a
    /// `Content-Disposition` that ``init(parsing:maxParameters:)`` and the parser's part heads share, so that the
    /// two can never disagree.
    struct Layout {
        var type: Range<Int>
        var name: HeaderValueParser.Value?
        var filename: HeaderValueParser.Value?
        var filenameStar: HeaderValueParser.Value?
    }

    /// A parameter other than `name`, `filename` and `filename*`: its name's raw bytes (any case) and its value.
    typealias OtherParameter = (name: Range<Int>, value: HeaderValueParser.Value)

    /// Parses `bytes` as ``init(parsing:maxParameters:)`` documents: backslashes literal first, then as escapes
    /// when that fails and the value holds a backslash. Checks everything, `filename*` included; adds the other
    /// parameters to `others` (kept apart so that a `Layout` is plain data, copied for free). Allocates only for
    /// other parameters.
    static func layout(
        of bytes: Span<UInt8>, maxParameters: Int, others: inout [OtherParameter]
    ) throws -> Layout {
        do {
            return try layout(of: bytes, maxParameters: maxParameters, backslashes: .literal, others: &others)
        } catch let error as MultipartError
            where error.code == .invalidHeader && ByteSearch.firstIndex(of: 0x5C, in: bytes) != nil
        {
            others.removeAll()
            guard
                let escaped = try? layout(
                    of: bytes, maxParameters: maxParameters, backslashes: .escapes, others: &others)
            else { throw error }
            return escaped
        }
    }

    private static func layout(
        of bytes: Span<UInt8>, maxParameters: Int, backslashes: HeaderValueParser.Backslashes,
        others: inout [OtherParameter]
    ) throws -> Layout {
        var layout = Layout(type: 0..<0)
        var otherNames: Set<String> = []  // only filled by other parameters, so that repeats are found in linear time
        var count = 0
        func repeated(_ parameter: String) -> MultipartError {
            MultipartError(code: .invalidHeader, message: "Content-Disposition gives the parameter \(parameter) twice")
        }
        layout.type = try HeaderValueParser.scan(bytes, header: "Content-Disposition", backslashes: backslashes) {
            nameRange, value in
            let parameter = bytes.extracting(nameRange)
            count += 1
            guard count <= maxParameters else {
                throw MultipartError(
                    code: .limitExceeded, message: "Content-Disposition has more than \(maxParameters) parameters",
                    limit: "maxParametersPerHeader")
            }
            if HeaderValueParser.name(parameter, is: "name") {
                guard layout.name == nil else { throw repeated("name") }
                layout.name = value
            } else if HeaderValueParser.name(parameter, is: "filename") {
                guard layout.filename == nil else { throw repeated("filename") }
                layout.filename = value
            } else if HeaderValueParser.name(parameter, is: "filename*") {
                guard layout.filenameStar == nil else { throw repeated("filename*") }
                _ = try decodeExtendedValue(value.decoded(in: bytes))
                layout.filenameStar = value
            } else {
                let lowercased = HeaderValueParser.lowercased(parameter)
                guard otherNames.insert(lowercased).inserted else { throw repeated(lowercased) }
                others.append((nameRange, value))
            }
        }
        guard !layout.type.isEmpty else {
            throw MultipartError(code: .invalidHeader, message: "Content-Disposition has no disposition type")
        }
        return layout
    }

    /// The disposition that `layout` and `others` describe in `bytes`: values unescaped and decoded.
    init(_ layout: Layout, others: [OtherParameter], in bytes: Span<UInt8>) {
        let type = String(decodingUTF8: bytes.extracting(layout.type))
        self.type = Self.hasUppercase(type) ? type.lowercased() : type
        name = layout.name.map { Self.decodeBrowserEscapes($0.decoded(in: bytes)) }
        filename = layout.filename.map { Self.decodeBrowserEscapes($0.decoded(in: bytes)) }
        filenameStar = layout.filenameStar.map { try! Self.decodeExtendedValue($0.decoded(in: bytes)) }  // checked
        otherParameters = others.map { name, value in
            Parameter(
                name: HeaderValueParser.lowercased(bytes.extracting(name)),
                value: value.decoded(in: bytes))
        }
    }

    private static func hasUppercase(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { $0.contains { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) } }
    }

    /// Undoes the WHATWG escaping of names and filenames: `%22`, `%0D` and `%0A` (either case); any other `%` is
    /// kept, `%25` included.
    static func decodeBrowserEscapes(_ text: String) -> String {
        var scanned = text
        guard scanned.withUTF8({ $0.contains(UInt8(ascii: "%")) }) else { return text }
        var bytes: [UInt8] = []
        var input = text.utf8[...]
        while let byte = input.popFirst() {
            if byte == UInt8(ascii: "%"), let decoded = percentEscape(startingWith: input) {
                bytes.append(decoded)
                input = input.dropFirst(2)
                continue
            }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Encodes `text` as an RFC 5987 value without its charset: UTF-8, every byte outside `attr-char`
    /// percent-encoded.
    static func encodeExtendedValue(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            case _ where "!#$&+-.^_`|~".utf8.contains(byte):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                encoded += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return encoded
    }

    /// Decodes an RFC 5987 extended value: `charset'language'percent-encoded`.
    static func decodeExtendedValue(_ text: String) throws -> String {
        let pieces = text.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard pieces.count == 3 else {
            throw MultipartError(
                code: .invalidHeader, message: "filename* \(String(reflecting: text)) is not charset'language'value")
        }
        var bytes: [UInt8] = []
        var input = pieces[2].utf8[...]
        while let byte = input.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard input.count >= 2, let high = Hex.value(of: input.popFirst()!),
                let low = Hex.value(of: input.popFirst()!)
            else {
                throw MultipartError(
                    code: .invalidHeader, message: "filename* has a bad % escape: \(String(reflecting: text))")
            }
            bytes.append(high << 4 | low)
        }
        switch pieces[0].lowercased() {
        case "utf-8":
            guard let decoded = String(validating: bytes, as: UTF8.self) else {
                throw MultipartError(code: .invalidHeader, message: "filename* is not valid UTF-8")
            }
            return decoded
        case "iso-8859-1":
            return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        default:
            throw MultipartError(
                code: .invalidHeader,
                message: "filename* has the unsupported charset \(String(reflecting: String(pieces[0])))")
        }
    }
}
