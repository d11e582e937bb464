/// A part's `Content-Disposition` header (RFC 7578 §4.2): `form-data` with a field `name` and, for files, a
/// `filename`.
///
/// Building escapes `name` and `filename` the way browsers do (the WHATWG HTML "multipart/form-data encoding
/// algorithm"): `"` becomes `%22`, CR `%0D` and LF `%0A`. Nothing else is changed, so non-ASCII names go out as
/// UTF-8, as every current browser sends them.
///
/// ```swift
/// ContentDisposition(name: "photo", filename: #"my "best".jpg"#).headerValue
/// // form-data; name="photo"; filename="my %22best%22.jpg"
/// ```
public struct ContentDisposition: Sendable, Hashable {
    /// The disposition type; `form-data` for every part of a form.
    public var type: String
    /// The form field's name.
    public var name: String?
    /// The file's name, for file parts, as sent: a browser's `%22`, `%0D` and `%0A` decoded, an old browser's
    /// full path (`C:\Users\a\photo.jpg`) kept whole; ``baseFilename`` strips the path.
    public var filename: String?
    /// The RFC 5987 / RFC 2231 `filename*` parameter, decoded, when the part has one. It never replaces
    /// ``filename``: a server chooses which to trust.
    public var filenameStar: String?
    /// The header value this was parsed from, if it was.
    var receivedValue: String?

    /// Every parameter, in order (names in lower case, values unquoted but not percent-decoded): as received when
    /// parsed, else as ``headerValue`` would send them.
    public var parameters: [Parameter] {
        (try? HeaderValueParser(receivedValue ?? headerValue, header: "Content-Disposition").parameters) ?? []
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

    /// The header value, with `name` and `filename` quoted and escaped.
    public var headerValue: String {
        var value = type
        if let name { value += "; name=\"\(Self.escape(name))\"" }
        if let filename { value += "; filename=\"\(Self.escape(filename))\"" }
        return value
    }

    /// Escapes a name or filename as browsers do: `"` → `%22`, CR → `%0D`, LF → `%0A`.
    public static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }) else { return text }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "%22"
            case "\r": escaped += "%0D"
            case "\n": escaped += "%0A"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
