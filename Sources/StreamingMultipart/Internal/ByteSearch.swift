#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Substring search over contiguous bytes: `memchr` finds each candidate first byte, `memcmp` checks the rest.
enum ByteSearch {
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
