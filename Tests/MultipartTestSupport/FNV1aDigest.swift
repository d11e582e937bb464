import StreamingMultipart

/// FNV-1a (64-bit) as a ``SpoolDigest``: what the core's tests hand the spooler, so that they check the digest's
/// plumbing (every byte, in order, once) without the Crypto product, whose own tests check SHA-256.
package struct FNV1aDigest: SpoolDigest {
    package static let algorithm = "fnv-1a-64"
    private var state: UInt64 = 0xcbf2_9ce4_8422_2325

    package init() {}

    package mutating func update(_ bytes: Span<UInt8>) {
        for index in bytes.indices {
            state = (state ^ UInt64(bytes[index])) &* 0x0000_0100_0000_01b3
        }
    }

    package mutating func finalize() -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: state >> (56 - 8 * $0)) }
    }

    /// The digest of `bytes` in hexadecimal, as ``SpooledFile``'s `digest?.hex` gives it.
    package static func hex(_ bytes: [UInt8]) -> String {
        var digest = FNV1aDigest()
        let slice = bytes[...]
        digest.update(slice.span)
        return digest.finalize().map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
