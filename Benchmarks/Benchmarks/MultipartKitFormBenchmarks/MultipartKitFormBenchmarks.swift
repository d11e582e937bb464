import Benchmark
import BenchmarkSupport
import MultipartKit
import NIOCore

/// MultipartKit 4.7.1's `FormDataDecoder` on the body `FormBenchmarks` decodes: 100,000 fields in ten lists.

struct Lists: Decodable {
    var f0, f1, f2, f3, f4, f5, f6, f7, f8, f9: [String]
}

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, Metrics.megabytesPerSecond, Metrics.partsPerSecond], timeUnits: .milliseconds,
        warmupIterations: 1, maxDuration: .seconds(20), maxIterations: 10)
    let body = ParseFixtures.listFields()
    let buffer = ByteBuffer(bytes: body.bytes)
    Benchmark("MultipartKit 4.7.1 decode: 100,000 fields in ten lists", configuration: configuration) { benchmark in
        try Metrics.measure(benchmark, bytes: body.bytes.count, parts: body.parts) {
            let lists = try FormDataDecoder().decode(Lists.self, from: buffer, boundary: ParseFixtures.boundary)
            precondition(lists.f0.count + lists.f9.count == body.parts / 5)
            return lists.f0.count
        }
    }
}
