import Benchmark
import BenchmarkSupport
import NIOCore
import StreamingMultipart
import StreamingMultipartNIO

/// The async parts layer against the sans-I/O parser on the same 64 KiB chunks: off any actor, and on the main
/// actor (where every `next()` hopped executors before `next(isolation:)`).

let contentType = "multipart/form-data; boundary=\(ParseFixtures.boundary)"

func limits() -> MultipartParser.Limits {
    var limits = MultipartParser.Limits.default
    limits.maxParts = 1_000_000
    return limits
}

/// The sans-I/O parser over the chunks, counting parts and body bytes.
@inline(never)
func parseSansIO(_ body: ParseFixtures.Body) throws {
    var parser = try MultipartParser(contentType: contentType, limits: limits())
    var parts = 0
    var bytes = 0
    var chunks = MemoryChunks(body.bytes).makeAsyncIterator()
    while let chunk = chunks.nextChunk() {
        try parser.append(chunk)
        while let event = try parser.next() {
            switch event {
            case .partHeaders: parts += 1
            case .bodyBytes(let slice): bytes += slice.count
            case .partEnd, .end: break
            }
        }
    }
    try parser.finish()
    precondition(parts == body.parts && bytes == body.bodyBytes, "parsed \(parts) parts, \(bytes) bytes")
}

/// The async parts over the same chunks, on the caller's actor (or none), counting the same.
@inline(never)
func parseAsync(_ body: ParseFixtures.Body, isolation: isolated (any Actor)? = #isolation) async throws {
    var parts = 0
    var bytes = 0
    for try await part in try MemoryChunks(body.bytes).multipartParts(contentType: contentType, limits: limits()) {
        parts += 1
        for try await chunk in part.body { bytes += chunk.count }
    }
    precondition(parts == body.parts && bytes == body.bodyBytes, "parsed \(parts) parts, \(bytes) bytes")
}

@MainActor
func parseAsyncOnMainActor(_ body: ParseFixtures.Body) async throws {
    try await parseAsync(body)
}

nonisolated func parseAsyncOffActors(_ body: ParseFixtures.Body) async throws {
    try await parseAsync(body, isolation: nil)
}

/// The async layer's time over the sans-I/O parser's, ×100, both timed back to back in one iteration so that the
/// machine's noise hits both alike.
let slowdown = BenchmarkMetric.custom("async/sans-I/O ×100", polarity: .prefersSmaller, useScalingFactor: false)

func recordSlowdown(_ benchmark: Benchmark, _ body: ParseFixtures.Body, async: () async throws -> Void) async throws {
    let start = Payload.now()
    try parseSansIO(body)
    let middle = Payload.now()
    try await async()
    let end = Payload.now()
    benchmark.measurement(slowdown, Int(100 * Double(end - middle) / Double(middle - start)))
}

/// A body's 64 KiB chunks as `ByteBuffer`s, made before timing: what a NIO server's request body hands over.
struct BufferChunks: AsyncSequence, Sendable {
    let buffers: [ByteBuffer]

    struct AsyncIterator: AsyncIteratorProtocol {
        let buffers: [ByteBuffer]
        var index = 0

        mutating func next(isolation actor: isolated (any Actor)?) async -> ByteBuffer? { nextBuffer() }
        mutating func next() async -> ByteBuffer? { nextBuffer() }

        mutating func nextBuffer() -> ByteBuffer? {
            guard index < buffers.count else { return nil }
            defer { index += 1 }
            return buffers[index]
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(buffers: buffers) }
}

/// The body's own array, lent in 64 KiB regions: the memory the arrays path reads, read by the lent path. Its ratio to
/// the arrays path is the lent path's own cost, with the memory the same on both sides.
struct LentArrayChunks: AsyncSequence, Sendable {
    /// Keeps the array, which is never written, so its storage neither moves nor changes while a region is lent.
    final class Owner: Sendable {
        let bytes: [UInt8]
        init(_ bytes: [UInt8]) { self.bytes = bytes }
    }

    struct Chunk: MultipartChunk, Sendable {
        typealias MultipartSlice = LentBytes
        let owner: Owner
        let range: Range<Int>

        var multipartBytes: MultipartBytes {
            owner.bytes.withUnsafeBytes {
                MultipartBytes(lending: UnsafeRawBufferPointer(rebasing: $0[range]), owner: owner)
            }
        }

        static func multipartSlice(_ bytes: consuming MultipartBytes) -> LentBytes { LentBytes(bytes) }
    }

    let owner: Owner

    struct AsyncIterator: AsyncIteratorProtocol {
        let owner: Owner
        var offset = 0

        mutating func next(isolation actor: isolated (any Actor)?) async -> Chunk? { nextChunk() }
        mutating func next() async -> Chunk? { nextChunk() }

        mutating func nextChunk() -> Chunk? {
            guard offset < owner.bytes.count else { return nil }
            let end = Swift.min(offset + 65536, owner.bytes.count)
            defer { offset = end }
            return Chunk(owner: owner, range: offset..<end)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(owner: owner) }
}

/// The async parts over chunks that lend their storage (`ByteBuffer`s): each body comes out as regions of them
/// (`LentBytes`).
nonisolated func parseLent<Source: AsyncSequence>(_ source: Source, _ body: ParseFixtures.Body) async throws
where Source.Element: MultipartChunk {
    var bytes = 0
    for try await part in try source.multipartParts(contentType: contentType, limits: limits()) {
        for try await chunk in part.body { bytes += chunk.count }
    }
    precondition(bytes == body.bodyBytes)
}

/// The async parts over the same ByteBuffers, each copied into an array first: what the parts sequence did before
/// buffers lent their storage, for the lent path to be measured against in the same run.
nonisolated func parseCopiedByteBuffers(_ buffers: BufferChunks, _ body: ParseFixtures.Body) async throws {
    var bytes = 0
    let arrays = buffers.map { [UInt8]($0.readableBytesView) }
    for try await part in try arrays.multipartParts(contentType: contentType, limits: limits()) {
        for try await chunk in part.body { bytes += chunk.count }
    }
    precondition(bytes == body.bodyBytes)
}

/// Lent ByteBuffers' time over copied ones' ×100, the two back to back in each iteration.
let lendingGain = BenchmarkMetric.custom("lent/copied ×100", polarity: .prefersSmaller, useScalingFactor: false)

/// ByteBuffers' time over arrays' ×100, the two back to back in each iteration.
let bufferCost = BenchmarkMetric.custom("ByteBuffers/arrays ×100", polarity: .prefersSmaller, useScalingFactor: false)

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, Metrics.megabytesPerSecond, Metrics.partsPerSecond], timeUnits: .milliseconds,
        warmupIterations: 2, maxDuration: .seconds(15), maxIterations: 20)

    let bodies = [
        ("F1 one 256 MiB part", ParseFixtures.oneLargePart()), ("F2 100,000 fields", ParseFixtures.manyFields()),
    ]
    for (name, body) in bodies {
        Benchmark("Sans-I/O: \(name)", configuration: configuration) { benchmark in
            try Metrics.measure(benchmark, bytes: body.bytes.count, parts: body.parts) { try parseSansIO(body) }
        }
        Benchmark("Async, off actors: \(name)", configuration: configuration) { benchmark in
            let start = Payload.now()
            try await parseAsyncOffActors(body)
            Metrics.record(benchmark, bytes: body.bytes.count, parts: body.parts, since: start)
        }
        Benchmark("Async, main actor: \(name)", configuration: configuration) { benchmark in
            let start = Payload.now()
            try await parseAsyncOnMainActor(body)
            Metrics.record(benchmark, bytes: body.bytes.count, parts: body.parts, since: start)
        }
        let ratios = Benchmark.Configuration(
            metrics: [slowdown], warmupIterations: 2, maxDuration: .seconds(20), maxIterations: 25)
        Benchmark("Slowdown, off actors: \(name)", configuration: ratios) { benchmark in
            try await recordSlowdown(benchmark, body) { try await parseAsyncOffActors(body) }
        }
        Benchmark("Slowdown, main actor: \(name)", configuration: ratios) { benchmark in
            try await recordSlowdown(benchmark, body) { try await parseAsyncOnMainActor(body) }
        }
        let buffers = BufferChunks(
            buffers: stride(from: 0, to: body.bytes.count, by: 65536).map {
                ByteBuffer(bytes: body.bytes[$0..<min($0 + 65536, body.bytes.count)])
            })
        Benchmark("Async over ByteBuffers: \(name)", configuration: configuration) { benchmark in
            let start = Payload.now()
            try await parseLent(buffers, body)
            Metrics.record(benchmark, bytes: body.bytes.count, parts: body.parts, since: start)
        }
        let lending = Benchmark.Configuration(
            metrics: [lendingGain], warmupIterations: 2, maxDuration: .seconds(20), maxIterations: 25)
        Benchmark("ByteBuffers lent vs copied: \(name)", configuration: lending) { benchmark in
            let start = Payload.now()
            try await parseCopiedByteBuffers(buffers, body)
            let middle = Payload.now()
            try await parseLent(buffers, body)
            let end = Payload.now()
            benchmark.measurement(lendingGain, Int(100 * Double(end - middle) / Double(middle - start)))
        }
        let copies = Benchmark.Configuration(
            metrics: [bufferCost], warmupIterations: 2, maxDuration: .seconds(20), maxIterations: 25)
        /// A benchmark of `source`'s time over the arrays' time, ×100, both back to back in each iteration.
        func againstArrays<Source: AsyncSequence & Sendable>(_ title: String, _ source: Source)
        where Source.Element: MultipartChunk {
            Benchmark("\(title) vs arrays: \(name)", configuration: copies) { benchmark in
                let start = Payload.now()
                try await parseAsyncOffActors(body)
                let middle = Payload.now()
                try await parseLent(source, body)
                let end = Payload.now()
                benchmark.measurement(bufferCost, Int(100 * Double(end - middle) / Double(middle - start)))
            }
        }
        againstArrays("ByteBuffers", buffers)
        // Slices of one buffer, as the arrays are slices of one array: one storage object for the whole body, where
        // the buffers above each have their own.
        let whole = ByteBuffer(bytes: body.bytes)
        againstArrays(
            "ByteBuffer slices",
            BufferChunks(
                buffers: stride(from: 0, to: body.bytes.count, by: 65536).map {
                    whole.getSlice(at: $0, length: min(65536, body.bytes.count - $0))!
                }))
        againstArrays("Lent arrays", LentArrayChunks(owner: LentArrayChunks.Owner(body.bytes)))
    }
    formBenchmarks()
}
