#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Searches and comparisons over contiguous bytes, on libc's vectorized `memchr` and `memcmp`: the one place the
/// parser's files reach them from.
enum ByteSearch {
    /// The index of the first `byte` in `bytes` at or after `start`, or nil.
    @inline(__always)
    static func firstIndex(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from start: Int = 0) -> Int? {
        guard start < bytes.count, let base = bytes.baseAddress else { return nil }
        guard let found = memchr(base + start, Int32(byte), bytes.count - start) else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    /// Whether `bytes` begins with `text`'s bytes.
    @inline(__always)
    static func hasPrefix(_ bytes: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
        bytes.count >= text.utf8CodeUnitCount
            && (text.utf8CodeUnitCount == 0 || memcmp(bytes.baseAddress!, text.utf8Start, text.utf8CodeUnitCount) == 0)
    }

    /// Whether `bytes` are exactly `text`'s bytes.
    @inline(__always)
    static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
        bytes.count == text.utf8CodeUnitCount && hasPrefix(bytes, text)
    }

    /// Whether `bytes` equal the first `bytes.count` bytes at `other`.
    @inline(__always)
    static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ other: UnsafePointer<UInt8>) -> Bool {
        bytes.isEmpty || memcmp(bytes.baseAddress!, other, bytes.count) == 0
    }

    /// The range of the first occurrence of `needle` in `haystack`, or nil.
    static func firstRange(of needle: UnsafeRawBufferPointer, in haystack: UnsafeRawBufferPointer) -> Range<Int>? {
        guard let needleBase = needle.baseAddress, let base = haystack.baseAddress, needle.count > 0 else {
            return nil
        }
        let first = Int32(needle[0])
        let lastStart = haystack.count - needle.count
        var start = 0
        while start <= lastStart {
            guard let hit = memchr(base + start, first, lastStart - start + 1) else { return nil }
            let position = base.distance(to: UnsafeRawPointer(hit))
            if memcmp(base + position, needleBase, needle.count) == 0 { return position..<(position + needle.count) }
            start = position + 1
        }
        return nil
    }
}
