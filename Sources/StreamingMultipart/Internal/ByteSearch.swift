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
