/// A field name of at most 16 bytes, as most are, packed into two words by the form decoder's name lookup: compared
/// and hashed in a few instructions, and kept with nothing retained, where the parser's span of the name lives
/// only inside a closure.
///
/// ```swift
/// if let short = ShortName(plain: nameBytes) { return try place(short: short, partIndex: index) }
/// ```
struct ShortName: Equatable {
    /// The most bytes a short name holds.
    static let capacity = 16

    /// Bytes 0–7, then 8–15, the first in the lowest byte; zero past `count`.
    private var low: UInt64 = 0
    private var high: UInt64 = 0
    let count: Int

    /// `bytes` packed, or nil when there are more than ``capacity`` or one is a `%` (a name a browser may have
    /// escaped, which the plain path must not take as it is).
    init?(plain bytes: Span<UInt8>) {
        guard bytes.count <= Self.capacity else { return nil }
        count = bytes.count
        for index in 0..<bytes.count {
            let byte = bytes[index]
            guard byte != UInt8(ascii: "%") else { return nil }
            put(byte, at: index)
        }
    }

    /// `utf8` packed, or nil when it holds more than ``capacity`` bytes.
    init?(_ utf8: String.UTF8View) {
        guard utf8.count <= Self.capacity else { return nil }
        count = utf8.count
        for (index, byte) in utf8.enumerated() { put(byte, at: index) }
    }

    /// Sets the byte at `index`, in `low` for the first eight, else in `high`.
    private mutating func put(_ byte: UInt8, at index: Int) {
        if index < 8 {
            low |= UInt64(byte) &<< (8 * index)
        } else {
            high |= UInt64(byte) &<< (8 * (index - 8))
        }
    }

    /// One of 64 slots, by a multiplicative hash of both words.
    var slot: Int { Int(truncatingIfNeeded: ((low ^ (high &* 31) ^ UInt64(count)) &* 0x9E37_79B9_7F4A_7C15) >> 58) }

    /// The name as a string.
    var string: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        for index in 0..<count {
            bytes.append(UInt8(truncatingIfNeeded: index < 8 ? low >> (8 * index) : high >> (8 * (index - 8))))
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
