#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds a delimiter pattern (`\r\n--boundary`, or `\n--boundary` in lenient mode) in contiguous bytes: the one hot
/// loop of the parser.
///
/// The search compares 16 positions at a time: one vector load for the pattern's first byte at each position and
/// one for its last byte `count - 1` further on (W. Muła's "SIMD-friendly" substring search). Only positions where
/// both match are checked in full with `memcmp`. Random data gives a candidate about once per 64 KiB, and CR/LF-dense
/// or boundary-prefix-dense data still takes one vector step per 16 bytes, so the scan is linear in every case.
/// Unsafe pointers stay inside the closures that lend them.
struct BoundaryScanner: Sendable {
    /// The pattern: a line break and `--boundary`; its first byte (CR or LF) occurs nowhere else in it.
    let pattern: [UInt8]

    init(pattern: [UInt8]) {
        precondition(pattern.count >= 2)
        self.pattern = pattern
    }

    /// The offset of the first full occurrence of the pattern at or after `start`, or nil.
    func firstMatch(in buffer: UnsafeRawBufferPointer, from start: Int) -> Int? {
        let count = pattern.count
        guard let base = buffer.baseAddress, buffer.count &- start >= count else { return nil }
        let firstByte = pattern[0]
        let first = SIMD16<UInt8>(repeating: firstByte)
        let last = SIMD16<UInt8>(repeating: pattern[count &- 1])
        let tailOffset = count &- 1
        // The vector loop reads 16 bytes at position + tailOffset: it runs while that stays inside the buffer.
        let vectorLimit = buffer.count &- tailOffset &- 16
        var position = start
        while position <= vectorLimit {
            let heads = base.loadUnaligned(fromByteOffset: position, as: SIMD16<UInt8>.self)
            let tails = base.loadUnaligned(fromByteOffset: position &+ tailOffset, as: SIMD16<UInt8>.self)
            let candidates = (heads .== first) .& (tails .== last)
            if any(candidates) {
                for lane in 0..<16 where candidates[lane] && matches(at: base + (position &+ lane)) {
                    return position &+ lane
                }
            }
            position &+= 16
        }
        // The last few positions, one at a time.
        while position &+ count <= buffer.count {
            if base.load(fromByteOffset: position, as: UInt8.self) == firstByte, matches(at: base + position) {
                return position
            }
            position &+= 1
        }
        return nil
    }

    @inline(__always)
    private func matches(at candidate: UnsafeRawPointer) -> Bool {
        pattern.withUnsafeBytes { memcmp(candidate, $0.baseAddress!, $0.count) == 0 }
    }

    /// Where the longest suffix of `buffer[start...]` that is a proper prefix of the pattern begins, or nil.
    ///
    /// Bytes before that point cannot belong to a delimiter that the next chunk completes. The pattern's first
    /// byte occurs only once in it, so only the last occurrence of that byte in the final `count - 1` bytes can
    /// begin such a suffix.
    func partialMatchStart(in buffer: UnsafeRawBufferPointer, from start: Int) -> Int? {
        let windowStart = max(start, buffer.count - (pattern.count - 1))
        var position = buffer.count - 1
        while position >= windowStart {
            if buffer[position] == pattern[0] {
                let length = buffer.count - position
                return pattern.withUnsafeBytes { memcmp(buffer.baseAddress! + position, $0.baseAddress!, length) == 0 }
                    ? position : nil
            }
            position -= 1
        }
        return nil
    }
}
