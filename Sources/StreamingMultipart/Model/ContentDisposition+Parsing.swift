extension ContentDisposition {
    /// The most parameters ``init(parsing:maxParameters:)`` reads by default, as
    /// ``MultipartParser/Limits/maxParametersPerHeader`` does.
    public static let defaultMaxParameters = 16

    /// Parses a `Content-Disposition` value (RFC 7578 §4.2, RFC 6266).
    ///
    /// Parameters are tokenized, not split: quoted strings keep `;` and `=`, names compare in any case, and a
    /// parameter given twice is an error (two readers could take different ones). `name` and `filename` are
    /// decoded the way browsers encode them (`%22` → `"`, `%0D` → CR, `%0A` → LF, and `%25` → `%` before one of
    /// those); `filename*` (RFC 5987: `UTF-8''%E2%9C%93.txt`, UTF-8 or ISO-8859-1) is decoded into ``filenameStar``.
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
    /// disposition.baseFilename   // "a.jpg"
    /// ```
    ///
    /// - Parameter maxParameters: the most parameters read; more is an error, so that a hostile header costs
    ///   bounded work.
    /// - Throws: ``MultipartError/Code/invalidHeader`` for a malformed value, a parameter given twice, or a
    ///   `filename*` with a bad `%` escape or an unknown charset; ``MultipartError/Code/limitExceeded`` for more
    ///   than `maxParameters` parameters.
    public init(parsing value: String, maxParameters: Int = defaultMaxParameters) throws {
        do {
            try self.init(parsing: value, maxParameters: maxParameters, backslashes: .literal)
        } catch let error as MultipartError where error.code == .invalidHeader && value.utf8.contains(0x5C) {
            guard let escaped = try? Self(parsing: value, maxParameters: maxParameters, backslashes: .escapes) else {
                throw error
            }
            self = escaped
        }
    }

    private init(parsing value: String, maxParameters: Int, backslashes: HeaderValueParser.Backslashes) throws {
        var name: String?
        var filename: String?
        var filenameStar: String?
        var others: [Parameter] = []
        var otherNames: Set<String> = []
        var count = 0
        func repeated(_ parameter: String) -> MultipartError {
            MultipartError(code: .invalidHeader, message: "Content-Disposition gives the parameter \(parameter) twice")
        }
        // One pass and no intermediate list: this runs once for every part a server receives.
        let type = try HeaderValueParser.scan(value, header: "Content-Disposition", backslashes: backslashes) {
            parameter, text in
            count += 1
            guard count <= maxParameters else {
                throw MultipartError(
                    code: .limitExceeded, message: "Content-Disposition has more than \(maxParameters) parameters")
            }
            if HeaderValueParser.name(parameter, is: "name") {
                guard name == nil else { throw repeated("name") }
                name = text
            } else if HeaderValueParser.name(parameter, is: "filename") {
                guard filename == nil else { throw repeated("filename") }
                filename = text
            } else if HeaderValueParser.name(parameter, is: "filename*") {
                guard filenameStar == nil else { throw repeated("filename*") }
                filenameStar = text
            } else {
                let lowercased = HeaderValueParser.lowercased(parameter)
                guard otherNames.insert(lowercased).inserted else { throw repeated(lowercased) }
                others.append(Parameter(name: lowercased, value: text))
            }
        }
        guard !type.isEmpty else {
            throw MultipartError(code: .invalidHeader, message: "Content-Disposition has no disposition type")
        }
        // Assigned field by field rather than through init(name:filename:), which would copy the whole value.
        self.type = Self.hasUppercase(type) ? type.lowercased() : type
        self.name = name.map(Self.decodeBrowserEscapes)
        self.filename = filename.map(Self.decodeBrowserEscapes)
        self.filenameStar = try filenameStar.map(Self.decodeExtendedValue)
        otherParameters = others
    }

    private static func hasUppercase(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { $0.contains { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) } }
    }

    /// The filename without any folder an old browser sent with it (after the last `/` or `\`).
    public var baseFilename: String? {
        guard let filename else { return nil }
        guard let separator = filename.lastIndex(where: { $0 == "/" || $0 == "\\" }) else { return filename }
        return String(filename[filename.index(after: separator)...])
    }

    /// Undoes the WHATWG escaping of names and filenames (`%22`, `%0D` and `%0A`, either case) and ``escape(_:)``'s
    /// `%25` before one of those or before `%25`; any other `%` is kept.
    static func decodeBrowserEscapes(_ text: String) -> String {
        var scanned = text
        guard scanned.withUTF8({ $0.contains(UInt8(ascii: "%")) }) else { return text }
        var bytes: [UInt8] = []
        var input = text.utf8[...]
        while let byte = input.popFirst() {
            if byte == UInt8(ascii: "%"), let decoded = percentEscape(startingWith: input),
                decoded != UInt8(ascii: "%") || percentEscape(startingWith: input.dropFirst(2)) != nil
            {
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
            guard input.count >= 2, let high = hexValue(input.popFirst()!), let low = hexValue(input.popFirst()!) else {
                throw MultipartError(code: .invalidHeader, message: "filename* has a bad % escape: \(String(reflecting: text))")
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
                code: .invalidHeader, message: "filename* has the unsupported charset \(String(reflecting: String(pieces[0])))")
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
