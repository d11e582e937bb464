import Benchmark
import BenchmarkSupport
import Foundation
import StreamingMultipart

/// Typed forms: decoding 100,000 small fields into ten `[String]` properties against parsing the same body to events
/// alone; encoding a 1 GiB file field through `MultipartFormEncoder` against appending the same part by hand.

/// The form of `ParseFixtures.listFields()`.
struct Lists: Decodable {
    var f0, f1, f2, f3, f4, f5, f6, f7, f8, f9: [String]
}

/// The same chunks through the async parts into `Lists`, returned: the caller chooses when its 100,000 strings are
/// freed.
@inline(never)
nonisolated func decode(_ body: ParseFixtures.Body) async throws -> Lists {
    let parts = try MemoryChunks(body.bytes).multipartParts(contentType: contentType, limits: limits())
    let lists = try await MultipartFormDecoder().decode(
        Lists.self, from: parts, maxMemoryBytes: 64 << 20, isolation: nil)
    precondition(lists.f0.count + lists.f9.count == body.parts / 5)
    return lists
}

/// The least a decoder into `Lists` must do, written by hand for this one shape: the sans-I/O parse, each field's
/// name read and its value made a `String` (its bytes gathered first: a chunk may end inside it), appended to its name's list. No budget, no
/// records of fields, no `Decodable`: the floor the decoder's ratio is read against.
@inline(never)
func minimalLoop(_ body: ParseFixtures.Body) throws -> [String: [String]] {
    var parser = try MultipartParser(contentType: contentType, limits: limits())
    var lists: [String: [String]] = [:]
    var name = ""
    var value: [UInt8] = []
    var chunks = MemoryChunks(body.bytes).makeAsyncIterator()
    while let chunk = chunks.nextChunk() {
        try parser.append(chunk)
        while let event = try parser.next() {
            switch event {
            case .partHeaders(let head):
                name = head.name
                value.removeAll(keepingCapacity: true)
            case .bodyBytes(let bytes): value += bytes
            case .partEnd: lists[name, default: []].append(String(decoding: value, as: UTF8.self))
            case .end: break
            }
        }
    }
    try parser.finish()
    precondition(lists.count == 10 && lists.values.map(\.count).reduce(0, +) == body.parts)
    return lists
}

/// A 1 GiB file's body read whole through a `BodyReader` into one 1 MiB buffer; returns the bytes read.
@inline(never)
func readAll(_ body: MultipartBody, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    var reader = body.makeReader()
    var total = 0
    while true {
        let count = try reader.read(into: buffer)
        if count == 0 { return total }
        total += count
    }
}

struct Video: Encodable {
    var title: String
    var video: URL
}

/// Decoding's time over the parse's (or the encoder's body over the hand-made one's), ×100, timed back to back in
/// each iteration so that the machine's noise hits both alike.
let decodeOverEvents = BenchmarkMetric.custom("decode/events ×100", polarity: .prefersSmaller, useScalingFactor: false)
let encoderOverHand = BenchmarkMetric.custom("encoder/by hand ×100", polarity: .prefersSmaller, useScalingFactor: false)

/// Registers the typed-form benchmarks beside the async layer's, whose sans-I/O parse they compare with.
func formBenchmarks() {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, Metrics.megabytesPerSecond, Metrics.partsPerSecond], timeUnits: .milliseconds,
        warmupIterations: 2, maxDuration: .seconds(15), maxIterations: 20)
    let body = ParseFixtures.listFields()
    let name = "100,000 fields in ten lists"
    Benchmark("Form events: \(name)", configuration: configuration) { benchmark in
        try Metrics.measure(benchmark, bytes: body.bytes.count, parts: body.parts) { try parseSansIO(body) }
    }
    Benchmark("Form decode: \(name)", configuration: configuration) { benchmark in
        let start = Payload.now()
        _ = try await decode(body)  // freed here, inside the time
        Metrics.record(benchmark, bytes: body.bytes.count, parts: body.parts, since: start)
    }
    let ratios = Benchmark.Configuration(
        metrics: [decodeOverEvents], warmupIterations: 2, maxDuration: .seconds(20), maxIterations: 25)
    // Twice each: timed until the value is made (the caller holds it; freeing its 100,000 strings comes after), and
    // timed until it is freed too, as when a request's form dies inside the handler.
    for freed in [false, true] {
        let timed = freed ? "decoded and freed" : "decoded"
        Benchmark("Decode over events, \(timed): \(name)", configuration: ratios) { benchmark in
            let start = Payload.now()
            try parseSansIO(body)
            let middle = Payload.now()
            var lists: Lists? = try await decode(body)
            if freed { lists = nil }
            let end = Payload.now()
            blackHole(lists)
            benchmark.measurement(decodeOverEvents, Int(100 * Double(end - middle) / Double(middle - start)))
        }
        Benchmark("Minimal loop over events, \(timed): \(name)", configuration: ratios) { benchmark in
            let start = Payload.now()
            try parseSansIO(body)
            let middle = Payload.now()
            var lists: [String: [String]]? = try minimalLoop(body)
            if freed { lists = nil }
            let end = Payload.now()
            blackHole(lists)
            benchmark.measurement(decodeOverEvents, Int(100 * Double(end - middle) / Double(middle - start)))
        }
    }

    let path = Payload.file(size: Payload.gibibyte)
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
    let encoding = Benchmark.Configuration(
        metrics: [.wallClock, Metrics.megabytesPerSecond, encoderOverHand], timeUnits: .milliseconds,
        warmupIterations: 1, maxDuration: .seconds(30), maxIterations: 7)
    Benchmark("Encode a 1 GiB file field, against by hand", configuration: encoding) { benchmark in
        let url = URL(fileURLWithPath: path)
        let start = Payload.now()
        var byHand = MultipartBody()
        try byHand.append(.text("Sunset", name: "title"))
        try byHand.append(.file(at: url, name: "video"))
        let handBytes = try readAll(byHand, into: buffer)
        let middle = Payload.now()
        let encoded = try MultipartFormEncoder().encode(Video(title: "Sunset", video: url))
        let encodedBytes = try readAll(encoded, into: buffer)
        let end = Payload.now()
        precondition(handBytes == encodedBytes, "\(handBytes) against \(encodedBytes) bytes")
        benchmark.measurement(encoderOverHand, Int(100 * Double(end - middle) / Double(middle - start)))
        Metrics.record(benchmark, bytes: encodedBytes, since: middle)
    }
}
