#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The benchmark form's file part: random bytes in a file under `$BENCHMARK_DIR` (default `/tmp`), written once and
/// reused while its size is right, so that runs read it from the page cache.
public enum Payload {
    public static let gibibyte = 1 << 30

    /// The path of a payload file of `size` bytes, created if missing.
    public static func file(size: Int) -> String {
        let folder = getenv("BENCHMARK_DIR").map { String(cString: $0) } ?? "/tmp"
        let path = "\(folder)/streaming-multipart-bench-\(size).bin"
        var info = stat()
        if stat(path, &info) == 0, Int(info.st_size) == size { return path }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        precondition(descriptor >= 0, "cannot create \(path)")
        defer { close(descriptor) }
        var state: UInt64 = 0x1234_5678_9ABC_DEF0
        let block = (0..<(min(size, 64 << 20) / 8)).map { _ -> UInt64 in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            return z ^ (z >> 27)
        }
        var written = 0
        while written < size {
            let count = block.withUnsafeBytes { bytes in
                write(descriptor, bytes.baseAddress!, min(bytes.count, size - written))
            }
            precondition(count > 0, "cannot write \(path)")
            written += count
        }
        return path
    }

    /// Reads `path` with 64 KiB `read()` calls into one buffer and returns the byte count: the plain baseline.
    public static func readLoop(_ path: String) -> Int {
        let descriptor = open(path, O_RDONLY)
        precondition(descriptor >= 0)
        defer { close(descriptor) }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64 * 1024, alignment: 4096)
        defer { buffer.deallocate() }
        var total = 0
        while case let count = read(descriptor, buffer, 64 * 1024), count > 0 { total += count }
        return total
    }

    /// Megabytes (10^6 bytes) per second.
    public static func megabytesPerSecond(bytes: Int, nanoseconds: UInt64) -> Int {
        Int(Double(bytes) / (Double(nanoseconds) / 1e9) / 1e6)
    }

    /// Monotonic nanoseconds.
    public static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
