import Benchmark
import BenchmarkSupport
import Foundation
import StreamingMultipart

/// The form: three fields and one file part, pulled in 64 KiB reads and thrown away. With a `boundary` of
/// the caller's, the reader also scans the file for it as it is read.
func pullForm(file: String, boundary: MultipartBoundary? = nil) throws -> Int64 {
    var body = boundary.map(MultipartBody.init(boundary:)) ?? MultipartBody()
    try body.append(.text("alpha", name: "a"))
    try body.append(.text("bravo", name: "b"))
    try body.append(.text("charlie", name: "c"))
    try body.append(.file(at: URL(fileURLWithPath: file), name: "file"))
    var reader = body.makeReader()
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 4096)
    defer { buffer.deallocate() }
    while try reader.read(into: buffer) > 0 {}
    precondition(reader.bytesRead == body.contentLength)
    return reader.bytesRead
}

let benchmarks: @Sendable () -> Void = {
    let throughput = Benchmark.Configuration(
        metrics: [.wallClock, .peakMemoryResident, Metrics.megabytesPerSecond], timeUnits: .milliseconds,
        warmupIterations: 1, maxDuration: .seconds(30), maxIterations: 15)
    let memory = Benchmark.Configuration(
        metrics: [.peakMemoryResident, .wallClock], timeUnits: .milliseconds, warmupIterations: 0,
        maxDuration: .seconds(60), maxIterations: 3)

    let gibibyteFile = Payload.file(size: Payload.gibibyte)

    Benchmark("Build: 3 fields + 1 GiB file, 64 KiB reads", configuration: throughput) { benchmark in
        try Metrics.measure(benchmark) { Int(try pullForm(file: gibibyteFile)) }
    }

    let chosen = try! MultipartBoundary("----WebKitFormBoundary7MA4YWxkTrZu0gW")
    Benchmark("Build, chosen boundary (file scanned for it): same form", configuration: throughput) { benchmark in
        try Metrics.measure(benchmark) { Int(try pullForm(file: gibibyteFile, boundary: chosen)) }
    }

    Benchmark("Baseline: read() loop, 64 KiB, same 1 GiB file", configuration: throughput) { benchmark in
        Metrics.measure(benchmark) { Payload.readLoop(gibibyteFile) }
    }

    let smallFile = Payload.file(size: 4 << 20)
    Benchmark("Memory: build a 4 MiB body", configuration: memory) { _ in
        blackHole(try pullForm(file: smallFile))
    }

    let hugeFile = Payload.file(size: 4 * Payload.gibibyte)
    Benchmark("Memory: build a 4 GiB body", configuration: memory) { _ in
        blackHole(try pullForm(file: hugeFile))
    }
}
