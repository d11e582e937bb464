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

    /// Where a parameter's value lies in the header value: its bytes without the quotes, and whether they hold
    /// `\"` or `\\` escapes to undo (a quoted string read with ``Backslashes/escapes``).
    struct Value {
        var range: Range<Int>
        var hasEscapes = false

        /// The value, unescaped.
        func decoded(in bytes: Span<UInt8>) -> String {
            let raw = bytes.extracting(range)
            guard hasEscapes else { return String(decodingUTF8: raw) }
            var result: [UInt8] = []
            result.reserveCapacity(raw.count)
            var index = 0
            while index < raw.count {
                if raw[index] == backslash, index + 1 < raw.count,
                    raw[index + 1] == quote || raw[index + 1] == backslash
                {
                    index += 1
                }
                result.append(raw[index])
                index += 1
            }
            return String(decoding: result, as: UTF8.self)
        }
    }

    /// Tokenizes `bytes`, calling `visit` with where each parameter's name lies (raw bytes, any case) and its value,
    /// and returns the main value's range, trimmed. Allocates nothing.
    static func scan(
        _ bytes: Span<UInt8>, header: String, backslashes: Backslashes,
        visit: (_ name: Range<Int>, _ value: Value) throws -> Void
    ) throws -> Range<Int> {
        var index = 0
        while index < bytes.count, bytes[index] != semicolon { index += 1 }
        let main = trimmed(bytes, 0..<index)
        while index < bytes.count {  // at a `;`
            index = skipSpaces(bytes, from: index + 1)
            if index == bytes.count { break }  // a trailing `;`
            let nameStart = index
            while index < bytes.count, bytes[index] != equals, bytes[index] != semicolon { index += 1 }
            let nameRange = trimmed(bytes, nameStart..<index)
            let name = bytes.extracting(nameRange)
            guard index < bytes.count, bytes[index] == equals else {
                throw invalid(header, "parameter \(String(reflecting: String(decodingUTF8: name))) has no '='")
            }
            guard !name.isEmpty else { throw invalid(header, "a parameter has an empty name") }
            index = skipSpaces(bytes, from: index + 1)
            let value: Value
            if index < bytes.count, bytes[index] == quote {
                (value, index) = try quotedString(bytes, from: index, header: header, backslashes: backslashes)
                index = skipSpaces(bytes, from: index)
                guard index == bytes.count || bytes[index] == semicolon else {
                    throw invalid(
                        header, "unexpected text after the quoted value of \(String(decodingUTF8: name))")
                }
            } else {
                let valueStart = index
                while index < bytes.count, bytes[index] != semicolon { index += 1 }
                value = Value(range: trimmed(bytes, valueStart..<index))
            }
            try visit(nameRange, value)
        }
        return main
    }

    /// ``scan(_:header:backslashes:visit:)-(Span<UInt8>,_,_,_)`` over a string, with names as their bytes and
    /// values decoded; returns the main value.
    static func scan(
        _ text: String, header: String, backslashes: Backslashes,
        visit: (_ name: Span<UInt8>, _ value: String) throws -> Void
    ) throws -> String {
        try text.withUTF8Span { bytes in
            let main = try scan(bytes, header: header, backslashes: backslashes) { name, value in
                try visit(bytes.extracting(name), value.decoded(in: bytes))
            }
            return String(decodingUTF8: bytes.extracting(main))
        }
    }

    /// Whether `name` equals `lowercaseName` in ASCII case-insensitive comparison.
    static func name(_ name: Span<UInt8>, is lowercaseName: StaticString) -> Bool {
        guard name.count == lowercaseName.utf8CodeUnitCount else { return false }
        if ByteSearch.equal(name, lowercaseName) { return true }  // sent in lower case, as usual
        for index in 0..<name.count {
            let byte = name[index]
            let wanted = ByteSearch.byte(of: lowercaseName, at: index)
            // `| 0x20` lower-cases a letter; only a letter may match that way (CR | 0x20 is `-`).
            guard
                byte == wanted || (byte | 0x20 == wanted && wanted >= UInt8(ascii: "a") && wanted <= UInt8(ascii: "z"))
            else { return false }
        }
        return true
    }

    static func lowercased(_ name: Span<UInt8>) -> String {
        guard name.indices.contains(where: { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(name[$0]) }) else {
            return String(decodingUTF8: name)
        }
        return String(decoding: name.indices.map { asciiLowercased(name[$0]) }, as: UTF8.self)
    }

    private static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    /// Reads a quoted string whose opening quote is at `start`; returns its value and the index after its closing
    /// quote.
    private static func quotedString(
        _ bytes: Span<UInt8>, from start: Int, header: String, backslashes: Backslashes
    ) throws -> (Value, Int) {
        var index = start + 1
        var hasEscapes = false
        while index < bytes.count {
            switch bytes[index] {
            case quote:
                return (Value(range: (start + 1)..<index, hasEscapes: hasEscapes), index + 1)
            case backslash
            where backslashes == .escapes && index + 1 < bytes.count
                && (bytes[index + 1] == quote || bytes[index + 1] == backslash):
                hasEscapes = true
                index += 2
            default:
                index += 1
            }
        }
        throw invalid(header, "a quoted string is not terminated")
    }

    private static func skipSpaces(_ bytes: Span<UInt8>, from start: Int) -> Int {
        var index = start
        while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") {
            index += 1
        }
        return index
    }

    /// `range` without the spaces and tabs at either end.
    static func trimmed(_ bytes: Span<UInt8>, _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, bytes[lower] == UInt8(ascii: " ") || bytes[lower] == UInt8(ascii: "\t") { lower += 1 }
        while upper > lower, bytes[upper - 1] == UInt8(ascii: " ") || bytes[upper - 1] == UInt8(ascii: "\t") {
            upper -= 1
        }
        return lower..<upper
    }

    private static func invalid(_ header: String, _ message: String) -> MultipartError {
        MultipartError(code: .invalidHeader, message: "\(header): \(message)")
    }
}
