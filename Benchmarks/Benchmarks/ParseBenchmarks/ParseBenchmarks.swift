import Benchmark
import BenchmarkSupport
import StreamingMultipart

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Parses `body` as a server would, in 64 KiB chunks (slices, no copies), and checks the counts.
@inline(never)
func parse(_ body: ParseFixtures.Body) throws {
    var limits = MultipartParser.Limits.default
    limits.maxParts = 1_000_000
    var parser = try MultipartParser(
        boundary: MultipartBoundary(contentType: "multipart/form-data; boundary=\(ParseFixtures.boundary)"),
        limits: limits)
    var parts = 0
    var bytes = 0
    var offset = 0
    let input = body.bytes
    repeat {
        let end = min(offset + 65536, input.count)
        try parser.append(input[offset..<end])
        offset = end
        while let event = try parser.next() {
            switch event {
            case .partHeaders: parts += 1
            case .bodyBytes(let slice): bytes += slice.count
            case .partEnd, .end: break
            }
        }
    } while offset < input.count
    try parser.finish()
    precondition(parts == body.parts && bytes == body.bodyBytes, "parsed \(parts) parts, \(bytes) bytes")
}

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal, Metrics.megabytesPerSecond, Metrics.partsPerSecond],
        timeUnits: .milliseconds, warmupIterations: 2,
        maxDuration: .seconds(20), maxIterations: 30)

    let bodies = ParseFixtures.all()
    for (name, body) in bodies {
        Benchmark("Parse: \(name)", configuration: configuration) { benchmark in
            try Metrics.measure(benchmark, bytes: body.bytes.count, parts: body.parts) { try parse(body) }
        }
    }

    // The ceilings on the same buffers: a memcpy of the whole body and a memchr count of its CR bytes.
    for (name, body) in bodies where name.hasPrefix("F1") || name.hasPrefix("F4") {
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: body.bytes.count, alignment: 64)
        Benchmark("Baseline: memcpy, \(name)", configuration: configuration) { benchmark in
            Metrics.measure(benchmark, bytes: body.bytes.count) {
                body.bytes.withUnsafeBytes { copy.copyMemory(from: $0) }
            }
        }
        Benchmark("Baseline: memchr CR count, \(name)", configuration: configuration) { benchmark in
            Metrics.measure(benchmark, bytes: body.bytes.count) {
                var count = 0
                body.bytes.withUnsafeBytes { bytes in
                    var position = 0
                    while let hit = memchr(bytes.baseAddress! + position, 13, bytes.count - position) {
                        count += 1
                        position = bytes.baseAddress!.distance(to: UnsafeRawPointer(hit)) + 1
                    }
                }
                return count
            }
        }
    }
}
