/// Recognizes a compressed body parsed without `--content-encoding`, from its first two bytes, so that the error
/// says what to pass instead of only that no boundary was found.
///
/// ```swift
/// CompressedInput.hint(firstBytes: [0x1F, 0x8B])
/// // "the input starts with 1f 8b, gzip's magic number: pass --content-encoding gzip"
/// ```
enum CompressedInput {
    /// The hint for a body that starts with `firstBytes`, or `nil` when they look like no compressed format.
    static func hint(firstBytes: [UInt8]) -> String? {
        guard firstBytes.count >= 2 else { return nil }
        let (first, second) = (firstBytes[0], firstBytes[1])
        let shown = firstBytes.prefix(2).map { ParseCommand.PartReport.hex([$0]) }.joined(separator: " ")
        if first == 0x1F && second == 0x8B {
            return "the input starts with \(shown), gzip's magic number: pass --content-encoding gzip"
        }
        // RFC 1950 with a 32 KiB window, at zlib's four levels of effort: what every deflate encoder writes.
        if first == 0x78 && [0x01, 0x5E, 0x9C, 0xDA].contains(second) {
            return "the input starts with \(shown), as a zlib stream does: if it is compressed, "
                + "pass --content-encoding deflate"
        }
        return nil
    }
}
