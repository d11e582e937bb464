#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Searches and comparisons over contiguous bytes, on libc's vectorized `memchr` and `memcmp`: the one place the
/// parser's files reach them from. Callers pass spans; the pointers stay in here.
enum ByteSearch {
    /// The index of the first `byte` in `bytes` at or after `start`, or nil.
    @inline(__always)
    static func firstIndex(of byte: UInt8, in bytes: Span<UInt8>, from start: Int = 0) -> Int? {
        guard start < bytes.count else { return nil }
        return bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, let found = memchr(base + start, Int32(byte), buffer.count - start)
            else { return nil }
            return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// The index of the first CR or LF in `bytes` at or after `start`, or nil: where a header line ends, found in
    /// one pass (a CR alone is an error the caller reports, so it needs the first of either, not each in turn).
    /// Sixteen bytes a step, the last few one at a time.
    @inline(__always)
    static func firstLineBreak(in bytes: Span<UInt8>, from start: Int) -> Int? {
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return nil }
            let carriageReturn = SIMD16<UInt8>(repeating: 0x0D)
            let lineFeed = SIMD16<UInt8>(repeating: 0x0A)
            var position = start
            while position &+ 16 <= buffer.count {
                let bytes = base.loadUnaligned(fromByteOffset: position, as: SIMD16<UInt8>.self)
                let breaks = (bytes .== carriageReturn) .| (bytes .== lineFeed)
                if any(breaks) { return position &+ laneBits(breaks).trailingZeroBitCount }
                position &+= 16
            }
            while position < buffer.count {
                let byte = base.load(fromByteOffset: position, as: UInt8.self)
                if byte == 0x0D || byte == 0x0A { return position }
                position &+= 1
            }
            return nil
        }
    }

    /// One bit a lane of a 16-lane mask, lane 0 lowest: each half's top bits gathered by one multiplication
    /// (bit 7 of byte `i` lands on bit `56 + i`).
    @inline(__always)
    static func laneBits(_ mask: SIMDMask<SIMD16<Int8>>) -> UInt16 {
        let halves = unsafeBitCast(mask, to: SIMD2<UInt64>.self)
        let low = ((halves[0] & 0x8080_8080_8080_8080) &* 0x0002_0408_1020_4081) &>> 56
        let high = ((halves[1] & 0x8080_8080_8080_8080) &* 0x0002_0408_1020_4081) &>> 56
        return UInt16(truncatingIfNeeded: low) | (UInt16(truncatingIfNeeded: high) &<< 8)
    }

    /// Whether `bytes` begins with `text`'s bytes.
    @inline(__always)
    static func hasPrefix(_ bytes: Span<UInt8>, _ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        guard count > 0 else { return true }
        return bytes.withUnsafeBufferPointer { memcmp($0.baseAddress!, text.utf8Start, count) == 0 }
    }

    /// Whether `bytes` are exactly `text`'s bytes.
    @inline(__always)
    static func equal(_ bytes: Span<UInt8>, _ text: StaticString) -> Bool {
        bytes.count == text.utf8CodeUnitCount && hasPrefix(bytes, text)
    }

    /// The byte of `text` at `index`, which must be below its `utf8CodeUnitCount`.
    @inline(__always)
    static func byte(of text: StaticString, at index: Int) -> UInt8 {
        precondition(index >= 0 && index < text.utf8CodeUnitCount)
        return text.utf8Start[index]
    }

    /// The range of the first occurrence of `needle` in `haystack`, or nil.
    static func firstRange(of needle: Span<UInt8>, in haystack: Span<UInt8>) -> Range<Int>? {
        needle.withUnsafeBytes { needle in
            haystack.withUnsafeBytes { haystack in
                guard let needleBase = needle.baseAddress, let base = haystack.baseAddress, needle.count > 0 else {
                    return nil
                }
                let first = Int32(needle[0])
                let lastStart = haystack.count - needle.count
                var start = 0
                while start <= lastStart {
                    guard let hit = memchr(base + start, first, lastStart - start + 1) else { return nil }
                    let position = base.distance(to: UnsafeRawPointer(hit))
                    if memcmp(base + position, needleBase, needle.count) == 0 {
                        return position..<(position + needle.count)
                    }
                    start = position + 1
                }
                return nil
            }
        }
    }
}
