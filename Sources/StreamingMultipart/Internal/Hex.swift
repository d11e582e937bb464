/// Hex both ways: lowercase hex for the package's digests and signatures (a table, not `String(format:)` per byte,
/// which was the slowest step of a part in `multipart parse`), and a hex digit's value for percent-decoding
/// (`filename*`, urlencoded forms).
///
/// ```swift
/// Hex.lowercase([0xCA, 0xFE])   // "cafe"
/// Hex.value(of: UInt8(ascii: "F"))   // 15
/// ```
package enum Hex {
    package static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The value of the hex digit `byte` (either case), or nil when it is none.
    package static func value(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
