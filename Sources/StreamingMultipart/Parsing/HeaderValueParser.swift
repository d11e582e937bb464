/// A header value split into its main value and its parameters, as in
/// `form-data; name="field"; filename="a;b.txt"` or `multipart/form-data; boundary=xyz`.
///
/// One pass over the bytes, linear whatever the input (a value of ten thousand backslashes included):
/// - the main value is everything before the first `;`, trimmed of spaces and tabs;
/// - each parameter is `name=value`, the name case-insensitive, the value either a quoted string or everything up
///   to the next `;`, trimmed. Unquoted values are taken as they are, since real clients send boundaries such as
///   `boundary'()+_,-./:=?` bare;
/// - inside a quoted string `;` and `=` are data, and backslashes are read as ``Backslashes`` says.
///
/// - Throws: ``MultipartError/Code/invalidHeader`` for a parameter without `=`, an empty parameter name, an
///   unterminated quoted string, or text after a closing quote.
enum HeaderValueParser {
    /// How a backslash inside a quoted string is read.
    enum Backslashes {
        /// As any other character, the way browsers send form-data names and filenames (WHATWG HTML): the first
        /// `"` closes the string.
        case literal
        /// `\"` and `\\` stand for `"` and `\` (RFC 9110 §5.6.4 quoted-pair, as Go and `curl --form-escape`
        /// escape); any other backslash is kept, since old clients send Windows paths (`C:\Users\a.txt`) raw.
        case escapes
    }

    private static let semicolon = UInt8(ascii: ";")
    private static let equals = UInt8(ascii: "=")
    private static let quote = UInt8(ascii: "\"")
    private static let backslash = UInt8(ascii: "\\")

    /// Tokenizes `text`, calling `visit` with each parameter's name (raw bytes, any case) and unquoted value, and
    /// returns the main value. Allocates nothing but the strings it hands out.
    static func scan(
        _ text: String, header: String, backslashes: Backslashes,
        visit: (_ name: UnsafeBufferPointer<UInt8>, _ value: String) throws -> Void
    ) throws -> String {
        var text = text
        return try text.withUTF8 { bytes in
            var index = 0
            while index < bytes.count, bytes[index] != semicolon { index += 1 }
            let main = string(bytes, trimming: 0..<index)
            while index < bytes.count {  // at a `;`
                index = skipSpaces(bytes, from: index + 1)
                if index == bytes.count { break }  // a trailing `;`
                let nameStart = index
                while index < bytes.count, bytes[index] != equals, bytes[index] != semicolon { index += 1 }
                let name = trimmed(bytes, nameStart..<index)
                guard index < bytes.count, bytes[index] == equals else {
                    throw invalid(header, "parameter \(String(reflecting: String(decoding: name, as: UTF8.self))) has no '='")
                }
                guard !name.isEmpty else { throw invalid(header, "a parameter has an empty name") }
                index = skipSpaces(bytes, from: index + 1)
                let value: String
                if index < bytes.count, bytes[index] == quote {
                    (value, index) = try quotedString(bytes, from: index, header: header, backslashes: backslashes)
                    index = skipSpaces(bytes, from: index)
                    guard index == bytes.count || bytes[index] == semicolon else {
                        throw invalid(header, "unexpected text after the quoted value of \(String(decoding: name, as: UTF8.self))")
                    }
                } else {
                    let valueStart = index
                    while index < bytes.count, bytes[index] != semicolon { index += 1 }
                    value = string(bytes, trimming: valueStart..<index)
                }
                try visit(name, value)
            }
            return main
        }
    }

    /// Whether `name` equals `lowercaseName` in any case.
    static func name(_ name: UnsafeBufferPointer<UInt8>, is lowercaseName: StaticString) -> Bool {
        guard name.count == lowercaseName.utf8CodeUnitCount else { return false }
        let expected = lowercaseName.utf8Start
        for index in 0..<name.count where asciiLowercased(name[index]) != expected[index] { return false }
        return true
    }

    static func lowercased(_ name: UnsafeBufferPointer<UInt8>) -> String {
        guard name.contains(where: { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else {
            return String(decoding: name, as: UTF8.self)
        }
        return String(decoding: name.map(asciiLowercased), as: UTF8.self)
    }

    private static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    /// Reads a quoted string whose opening quote is at `start`; returns it and the index after its closing quote.
    private static func quotedString(
        _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, header: String, backslashes: Backslashes
    ) throws -> (String, Int) {
        var index = start + 1
        // The usual quoted string has no backslash: one copy straight into the String.
        while index < bytes.count, bytes[index] != quote, backslashes == .literal || bytes[index] != backslash {
            index += 1
        }
        if index < bytes.count, bytes[index] == quote {
            return (String(decoding: UnsafeBufferPointer(rebasing: bytes[(start + 1)..<index]), as: UTF8.self), index + 1)
        }
        var runStart = start + 1
        var result: [UInt8] = []
        while index < bytes.count {
            switch bytes[index] {
            case quote:
                result += bytes[runStart..<index]
                return (String(decoding: result, as: UTF8.self), index + 1)
            case backslash where index + 1 < bytes.count && (bytes[index + 1] == quote || bytes[index + 1] == backslash):
                result += bytes[runStart..<index]
                result.append(bytes[index + 1])
                index += 2
                runStart = index
            default:
                index += 1
            }
        }
        throw invalid(header, "a quoted string is not terminated")
    }

    private static func skipSpaces(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") { index += 1 }
        return index
    }

    private static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, bytes[lower] == UInt8(ascii: " ") || bytes[lower] == UInt8(ascii: "\t") { lower += 1 }
        while upper > lower, bytes[upper - 1] == UInt8(ascii: " ") || bytes[upper - 1] == UInt8(ascii: "\t") { upper -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[lower..<upper])
    }

    private static func string(_ bytes: UnsafeBufferPointer<UInt8>, trimming range: Range<Int>) -> String {
        String(decoding: trimmed(bytes, range), as: UTF8.self)
    }

    private static func invalid(_ header: String, _ message: String) -> MultipartError {
        MultipartError(code: .invalidHeader, message: "\(header): \(message)")
    }
}
