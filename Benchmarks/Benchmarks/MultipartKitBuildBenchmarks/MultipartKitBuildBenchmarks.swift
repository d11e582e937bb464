import Benchmark
import BenchmarkSupport
import MultipartKit
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// MultipartKit 4.7.1 builds in memory: the file is loaded into a ByteBuffer and the whole body serialized into
/// another, as its API requires. The time includes loading the file, as in Peers/ (the build rules in its README).
func serializeForm(file path: String) throws -> Int {
    let descriptor = open(path, O_RDONLY)
    precondition(descriptor >= 0)
    defer { close(descriptor) }
    var info = stat()
    fstat(descriptor, &info)
    let size = Int(info.st_size)
    var file = ByteBufferAllocator().buffer(capacity: size)
    file.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { buffer in
        var offset = 0
        while offset < size {
            let count = read(descriptor, buffer.baseAddress! + offset, min(64 * 1024, size - offset))
            precondition(count > 0)
            offset += count
        }
        return offset
    }
    var parts: [MultipartPart] = [("a", "alpha"), ("b", "bravo"), ("c", "charlie")].map { name, value in
        MultipartPart(headers: ["Content-Disposition": "form-data; name=\"\(name)\""], body: value)
    }
    parts.append(
        MultipartPart(
            headers: [
                "Content-Disposition": "form-data; name=\"file\"; filename=\"payload.bin\"",
                "Content-Type": "application/octet-stream",
            ],
            body: file))
    var output = ByteBuffer()
    try MultipartSerializer().serialize(
        parts: parts, boundary: "----MultipartKitBoundary0123456789abcdef", into: &output)
    return output.readableBytes
}

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .peakMemoryResident, Metrics.megabytesPerSecond], timeUnits: .milliseconds,
        warmupIterations: 1, maxDuration: .seconds(30), maxIterations: 8)
    let file = Payload.file(size: Payload.gibibyte)

    Benchmark("MultipartKit 4.7.1 serializer: 3 fields + 1 GiB file (in memory)", configuration: configuration) {
        benchmark in
        try Metrics.measure(benchmark) { try serializeForm(file: file) }
    }
}
