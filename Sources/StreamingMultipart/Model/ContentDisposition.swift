/// A part's `Content-Disposition` header (RFC 7578 §4.2): `form-data` with a field `name` and, for files, a
/// `filename`.
///
/// Building escapes `name` and `filename` the way browsers do (the WHATWG HTML "multipart/form-data encoding
/// algorithm"): `"` becomes `%22`, CR `%0D` and LF `%0A`, and a `%` and a backslash are sent as they are. Non-ASCII
/// names go out as UTF-8, as every current browser sends them. A name that holds `%22`, `%0D` or `%0A` as text
/// therefore reads back unescaped, as from a browser (``escape(_:)``).
///
/// ```swift
/// ContentDisposition(name: "photo", filename: #"my "best".jpg"#).headerValue
/// // form-data; name="photo"; filename="my %22best%22.jpg"
/// ```
///
/// Two dispositions are equal when their fields are: a parsed `form-data; name="a"` equals
/// `ContentDisposition(name: "a")`.
public struct ContentDisposition: Sendable, Hashable {
    /// The disposition type in lower case; `form-data` for every part of a form.
    public var type: String
    /// The form field's name.
    public var name: String?
    /// The file's name, for file parts, as sent: a browser's `%22`, `%0D` and `%0A` decoded, an old browser's
    /// full path (`C:\Users\a\photo.jpg`) kept whole; ``safeFilename`` strips the path.
    public var filename: String?
    /// The RFC 5987 / RFC 2231 `filename*` parameter, decoded, when the part has one. It never replaces
    /// ``filename``: a server chooses which to trust.
    public var filenameStar: String?
    /// Parameters other than `name`, `filename` and `filename*`, in the order received (names in lower case,
    /// values unquoted).
    public var otherParameters: [Parameter] = []

    /// Every parameter, in order: `name`, `filename`, `filename*` (encoded as `UTF-8''…`), then
    /// ``otherParameters``. Values are unquoted and unescaped.
    public var parameters: [Parameter] {
        var parameters: [Parameter] = []
        if let name { parameters.append(Parameter(name: "name", value: name)) }
        if let filename { parameters.append(Parameter(name: "filename", value: filename)) }
        if let filenameStar {
            parameters.append(Parameter(name: "filename*", value: "UTF-8''" + Self.encodeExtendedValue(filenameStar)))
        }
        return parameters + otherParameters
    }

    /// One `name=value` parameter.
    public struct Parameter: Hashable, Sendable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A `form-data` disposition.
    public init(name: String?, filename: String? = nil) {
        self.type = "form-data"
        self.name = name
        self.filename = filename
    }

    /// The header value: `name`, `filename` and any other parameter quoted and escaped, `filename*` encoded.
    public var headerValue: String {
        var value = type
        for parameter in parameters {
            if parameter.name == "filename*" {
                value += "; filename*=\(parameter.value)"
            } else {
                value += "; \(parameter.name)=\"\(Self.escape(parameter.value))\""
            }
        }
        return value
    }

    /// Escapes a name or filename as browsers do (the WHATWG multipart/form-data encoding): `"` → `%22`, CR → `%0D`,
    /// LF → `%0A`, and nothing else: `%` and `\` go out as they are.
    ///
    /// A name that holds `%22`, `%0D` or `%0A` as text is sent as it is and read back unescaped (`"`, CR, LF), by
    /// this parser as by every reader that follows the standard: the encoding itself cannot tell the two apart.
    ///
    /// ```swift
    /// ContentDisposition.escape(#"100% "x".txt"#)   // 100% %22x%22.txt
    /// ```
    public static func escape(_ text: String) -> String {
        let needsEscaping = text.utf8.contains { $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }
        guard needsEscaping else { return text }
        var escaped: [UInt8] = []
        escaped.reserveCapacity(text.utf8.count + 8)
        for byte in text.utf8 {
            switch byte {
            case 0x22: escaped += Array("%22".utf8)
            case 0x0D: escaped += Array("%0D".utf8)
            case 0x0A: escaped += Array("%0A".utf8)
            default: escaped.append(byte)
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    /// The byte that `%` followed by the first two bytes of `rest` decodes to, when they are `22`, `0D` or `0A`
    /// (either case, as Node's undici reads them).
    static func percentEscape<Rest: Collection<UInt8>>(startingWith rest: Rest) -> UInt8? {
        var pair = rest.makeIterator()
        guard let high = pair.next(), let low = pair.next() else { return nil }
        switch (high, low) {
        case (UInt8(ascii: "2"), UInt8(ascii: "2")): return UInt8(ascii: "\"")
        case (UInt8(ascii: "0"), UInt8(ascii: "D")), (UInt8(ascii: "0"), UInt8(ascii: "d")): return 0x0D
        case (UInt8(ascii: "0"), UInt8(ascii: "A")), (UInt8(ascii: "0"), UInt8(ascii: "a")): return 0x0A
        default: return nil
        }
    }
}
