import Benchmark
import BenchmarkSupport
import MultipartKit
import NIOCore

/// MultipartKit 4.7.1's parser on the same bodies, in 64 KiB ByteBuffer slices, counting parts and body bytes.
@inline(never)
func parse(_ body: ParseFixtures.Body, _ buffer: ByteBuffer) throws {
    let parser = MultipartParser(boundary: ParseFixtures.boundary)
    var parts = 0
    var bytes = 0
    parser.onBody = { bytes += $0.readableBytes }
    parser.onPartComplete = { parts += 1 }
    var offset = 0
    while offset < buffer.readableBytes {
        let length = min(65536, buffer.readableBytes - offset)
        try parser.execute(buffer.getSlice(at: buffer.readerIndex + offset, length: length)!)
        offset += length
    }
    precondition(parts == body.parts && bytes == body.bodyBytes, "parsed \(parts) parts, \(bytes) bytes")
}

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, Metrics.megabytesPerSecond, Metrics.partsPerSecond], timeUnits: .milliseconds,
        warmupIterations: 1,
        maxDuration: .seconds(20), maxIterations: 10)
    let bodies = ParseFixtures.all()
    for (name, body) in bodies {
        let buffer = ByteBuffer(bytes: body.bytes)
        Benchmark("MultipartKit 4.7.1 parse: \(name)", configuration: configuration) { benchmark in
            try Metrics.measure(benchmark, bytes: body.bytes.count, parts: body.parts) { try parse(body, buffer) }
        }
    }
}
