#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A `read(2)` that failed, with the system's reason.
struct ReadFailure: Error {
    let reason: String
}

/// Appends what one `read(2)` of `descriptor` returns to `output` (nothing at the end of the input).
///
/// - Throws: ``ReadFailure``.
func readInput(_ descriptor: Int32, into output: inout OutputSpan<UInt8>) throws {
    try output.withUnsafeMutableBufferPointer { buffer, initialized in
        let free = UnsafeMutableBufferPointer(rebasing: buffer[initialized...])
        let count = read(descriptor, free.baseAddress, free.count)
        guard count >= 0 else {
            throw ReadFailure(reason: String(cString: strerror(errno)))
        }
        initialized += count
    }
}
