import Foundation

/// The charsets a spooled field is decoded from: the labels the WHATWG Encoding Standard gives for the encodings
/// forms are sent in, that Foundation decodes on every platform.
///
/// `us-ascii` and `iso-8859-1` are windows-1252, as the Encoding Standard (and every browser) reads them. UTF-16 is
/// not among them: a browser never submits a form in an encoding that is not ASCII-compatible (HTML's form
/// submission sends UTF-8 instead), and read as UTF-16 an ASCII form turns into other text (`abc` into `扡`, an odd
/// last byte lost).
///
/// Which charset a field is in is one rule, read the same way by the spooler and by
/// `MultipartFormDecoder.decode(_:from:maxMemoryBytes:)`: the part's own `charset` parameter; else the value of the
/// form's first `_charset_` field, wherever it stands among the fields (HTML fills it with the form's encoding); else
/// UTF-8.
enum FieldCharset {
    /// The field whose value names the form's charset.
    static let formCharsetField = "_charset_"

    /// The `charset` parameter of a part's `Content-Type`, or nil.
    static func ofPart(contentType: String?) -> String? {
        contentType.flatMap { try? ContentType(parsing: $0) }?.charset
    }

    /// Whether `charset` decodes every byte as UTF-8 does (nil is UTF-8).
    static func isUTF8(_ charset: String?) -> Bool {
        guard let charset else { return true }
        return encodings[charset.trimmingCharacters(in: .whitespaces).lowercased()] == .utf8
    }

    private static let encodings: [String: String.Encoding] = {
        var table: [String: String.Encoding] = [:]
        for label in ["utf-8", "utf8", "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "x-unicode20utf8"] {
            table[label] = .utf8
        }
        for label in [
            "windows-1252", "cp1252", "x-cp1252", "us-ascii", "ascii", "ansi_x3.4-1968", "iso-8859-1", "iso8859-1",
            "iso_8859-1", "iso88591", "latin1", "l1", "cp819", "ibm819",
        ] {
            table[label] = .windowsCP1252
        }
        for label in ["shift_jis", "shift-jis", "sjis", "ms_kanji", "csshiftjis", "windows-31j", "x-sjis", "ms932"] {
            table[label] = .shiftJIS
        }
        for label in ["iso-2022-jp", "csiso2022jp"] { table[label] = .iso2022JP }
        return table
    }()

    /// The Encoding Standard's labels of UTF-16LE and UTF-16BE: named in the error, since they are refused on
    /// purpose.
    private static let utf16Labels: Set<String> = [
        "utf-16le", "utf-16", "ucs-2", "unicode", "unicodefeff", "iso-10646-ucs-2", "csunicode", "utf-16be",
        "unicodefffe",
    ]

    /// Decodes a field's bytes.
    ///
    /// - Parameter charset: the label, in any case, with surrounding spaces; nil for UTF-8.
    /// - Throws: ``MultipartError/Code/unsupportedCharset`` for a label not above (UTF-16's included), or bytes
    ///   that are not valid in a charset other than UTF-8 (UTF-8's invalid bytes become U+FFFD).
    static func decode(_ bytes: [UInt8], charset: String?, partIndex: Int, name: String) throws -> String {
        guard let charset else { return String(decoding: bytes, as: UTF8.self) }
        let label = charset.trimmingCharacters(in: .whitespaces).lowercased()
        guard let encoding = encodings[label] else {
            let why =
                utf16Labels.contains(label)
                ? "which is not ASCII-compatible: browsers never submit a form in it" : "which is not decoded"
            throw MultipartError(
                code: .unsupportedCharset,
                message: "field \"\(name)\" (part \(partIndex + 1)) is in charset \"\(charset)\", \(why)",
                partIndex: partIndex)
        }
        if encoding == .utf8 { return String(decoding: bytes, as: UTF8.self) }
        guard let value = String(bytes: bytes, encoding: encoding) else {
            throw MultipartError(
                code: .unsupportedCharset,
                message: "field \"\(name)\" (part \(partIndex + 1)) holds bytes that are not valid \(label)",
                partIndex: partIndex)
        }
        return value
    }
}
