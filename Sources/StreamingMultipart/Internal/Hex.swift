/// Lowercase hex, for the package's digests and signatures (a table, not `String(format:)` per byte, which was the
/// slowest step of a part in `multipart parse`).
///
/// ```swift
/// Hex.lowercase([0xCA, 0xFE])   // "cafe"
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
}
