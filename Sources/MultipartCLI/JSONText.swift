/// Minimal JSON writing for `parse --json`, so that keys come out in the documented order.
enum JSONText {
    /// A JSON string literal: `"`, `\\` and control characters escaped, UTF-8 passed through. Works on the UTF-8
    /// bytes, since a report holds one for every name, filename and header of every part.
    static func string(_ value: String?) -> String {
        guard let value else { return "null" }
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = [UInt8(ascii: "\"")]
        out.reserveCapacity(value.utf8.count + 2)
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20, 0x7F:
                out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
        return String(decoding: out, as: UTF8.self)
    }

    static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { "\(string($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }
}
