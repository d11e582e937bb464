/// A header value split into its main value and its parameters, as in
/// `form-data; name="field"; filename="a;b.txt"` or `multipart/form-data; boundary=xyz`.
///
/// One pass over the bytes, linear whatever the input (a value of ten thousand backslashes included):
/// - the main value is everything before the first `;`, trimmed of spaces and tabs;
/// - each parameter is `name=value`, the name case-insensitive (kept in lower case), the value either a quoted string
///   or everything up to the next `;`, trimmed. Unquoted values are taken as they are, since real clients send
///   boundaries such as `boundary'()+_,-./:=?` bare;
/// - in a quoted string `\"` and `\\` stand for `"` and `\`; any other backslash is kept, because browsers send
///   Windows paths (`C:\Users\a.txt`) unescaped. `;` and `=` inside quotes are data.
///
/// - Throws: ``MultipartError/Code/invalidHeader`` for a parameter without `=`, an empty parameter name, an
///   unterminated quoted string, or text after a closing quote.
struct HeaderValueParser {
    typealias Parameter = ContentDisposition.Parameter

    var value: String
    var parameters: [Parameter] = []

    /// The value of the first parameter named `name` (lower case).
    func parameter(_ name: String) -> String? {
        parameters.first { $0.name == name }?.value
    }

    init(_ text: String, header: String) throws {
        var bytes = text.utf8[...]
        self = try Self.parse(&bytes, header: header)
    }

    private init(value: String, parameters: [Parameter]) {
        self.value = value
        self.parameters = parameters
    }

    private static func parse(_ bytes: inout Substring.UTF8View, header: String) throws -> HeaderValueParser {
        let main = bytes.prefix { $0 != UInt8(ascii: ";") }
        bytes = bytes[main.endIndex...]
        var result = HeaderValueParser(value: String(Substring(trimmed(main))), parameters: [])
        while let separator = bytes.first {
            precondition(separator == UInt8(ascii: ";"))
            bytes = trimmed(bytes.dropFirst(), trailing: false)
            if bytes.isEmpty { break }  // a trailing `;`
            let nameEnd = bytes.firstIndex { $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: ";") } ?? bytes.endIndex
            let name = trimmed(bytes[..<nameEnd])
            guard nameEnd < bytes.endIndex, bytes[nameEnd] == UInt8(ascii: "=") else {
                throw invalid(header, "parameter \(String(reflecting: String(Substring(name)))) has no '='")
            }
            guard !name.isEmpty else { throw invalid(header, "a parameter has an empty name") }
            bytes = trimmed(bytes[bytes.index(after: nameEnd)...], trailing: false)
            let value: String
            if bytes.first == UInt8(ascii: "\"") {
                value = try quotedString(&bytes, header: header)
                bytes = trimmed(bytes, trailing: false)
                guard bytes.isEmpty || bytes.first == UInt8(ascii: ";") else {
                    throw invalid(header, "unexpected text after the quoted value of \(String(Substring(name)))")
                }
            } else {
                let end = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
                value = String(Substring(trimmed(bytes[..<end])))
                bytes = bytes[end...]
            }
            result.parameters.append(Parameter(name: String(Substring(name)).lowercased(), value: value))
        }
        return result
    }

    /// Reads a quoted string, `bytes` at its opening quote, and leaves `bytes` after its closing quote.
    private static func quotedString(_ bytes: inout Substring.UTF8View, header: String) throws -> String {
        var result: [UInt8] = []
        var index = bytes.index(after: bytes.startIndex)
        while index < bytes.endIndex {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                bytes = bytes[bytes.index(after: index)...]
                return String(decoding: result, as: UTF8.self)
            case UInt8(ascii: "\\"):
                let next = bytes.index(after: index)
                if next < bytes.endIndex, bytes[next] == UInt8(ascii: "\"") || bytes[next] == UInt8(ascii: "\\") {
                    result.append(bytes[next])
                    index = bytes.index(after: next)
                    continue
                }
                result.append(byte)
            default:
                result.append(byte)
            }
            index = bytes.index(after: index)
        }
        throw invalid(header, "a quoted string is not terminated")
    }

    private static func trimmed(_ bytes: Substring.UTF8View, trailing: Bool = true) -> Substring.UTF8View {
        var bytes = bytes
        while let first = bytes.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { bytes.removeFirst() }
        while trailing, let last = bytes.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") {
            bytes.removeLast()
        }
        return bytes
    }

    private static func invalid(_ header: String, _ message: String) -> MultipartError {
        MultipartError(code: .invalidHeader, message: "\(header): \(message)")
    }
}
