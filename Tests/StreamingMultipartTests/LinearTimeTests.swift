import MultipartTestSupport
import Testing

@testable import StreamingMultipart

/// Hostile bodies at 1, 16 and 64 MB: the time to parse one must grow linearly with its size (64 MB within 8× of
/// 16 MB: a quadratic loop gives 16×) and what the parser holds must stay bounded by one chunk and one header block.
///
/// The time is the parsing thread's CPU time, not a wall clock, so the check holds on a busy machine; see
/// ``linearGrowthRatio(limit:attempts:medium:large:)`` for how a slowed run is told from a slow algorithm.
///
/// Each body is a head, a unit repeated to the size, and a tail, generated a 64 KiB chunk at a time, so the test
/// itself holds no more than a chunk.
@Suite(.serialized) struct LinearTimeTests {
    static let boundary = "----WebKitFormBoundary7MA4YWxkTrZu0gW"

    struct Flood: CustomTestStringConvertible, Sendable {
        var name: String
        var head: [UInt8]
        var unit: [UInt8]
        var tail: [UInt8]
        var mode: MultipartParser.Mode = .strict
        var limits = MultipartParser.Limits.default
        /// Whether the unit is a whole part, so that a larger body has more parts.
        var unitIsAPart = false
        /// Whether the body is sent gzipped, through `DecompressingMultipartParser`.
        var gzipped = false
        var testDescription: String { "\(name) (\(mode)\(gzipped ? ", gzip" : ""))" }
    }

    static var floods: [Flood] {
        let b = boundary
        let fileHead = crlf("--\(b)\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f.bin\"\r\n\r\n")
        let close = crlf("\r\n--\(b)--\r\n")
        let part = crlf("--\(b)\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n")
        var manyParts = MultipartParser.Limits.default
        manyParts.maxParts = 10_000_000
        var manyParameters = manyParts
        manyParameters.maxParametersPerHeader = 4096
        // A repeated unit compresses far past the bomb limit: the gzipped floods measure the parse, not that limit.
        var gzipped = manyParts
        gzipped.maxDecompressionRatio = 1_000_000
        // Lines every reader takes for data (the boundary cut short, after a bare CR or LF with text after it, in
        // the middle of a line), and in lenient mode a line that begins with the boundary and goes on.
        let cutShort = ["\r\n--\(b.dropLast())", "\r\n-", "\r\n-------", "\r\n--\(b.prefix(19))"]
        let nearMisses = cutShort + ["\r--\(b)X", "\n--\(b)X", "x--\(b)\r\n", "x--\(b)--"]
        let lenientNearMisses = nearMisses + ["\r\n--\(b)X"]
        // In a preamble a boundary mid-line followed by a line break is Werkzeug's first delimiter.
        let preambleNearMisses = cutShort + ["\r--\(b)X", "\n--\(b)X", "x--\(b)X", "\r\n--\(b)X"]
        let folded =
            "--\(b)\r\nContent-Disposition: form-data; name=\"a\"\r\nX-Folded: a\r\n"
            + String(repeating: " folded line\r\n", count: 1000) + "\r\nv\r\n"
        let parameters = (0..<1200).map { "; p\($0)=v" }.joined()
        return [
            Flood(
                name: "blanks after the close delimiter", head: part + crlf("--\(b)--"), unit: crlf(" \t  "), tail: [],
                mode: .lenient),
            Flood(name: "CR/LF flood in a file", head: fileHead, unit: crlf("\r\n\r\r\n\n"), tail: close),
            Flood(name: "LF flood in a file", head: fileHead, unit: crlf("\n\n\n\n"), tail: close, mode: .lenient),
            Flood(
                name: "delimiter near-misses in a file", head: fileHead, unit: crlf(nearMisses.joined()), tail: close),
            Flood(
                name: "delimiter near-misses in a file", head: fileHead, unit: crlf(lenientNearMisses.joined()),
                tail: close, mode: .lenient),
            // Strict mode refuses a preamble that holds the boundary; lenient mode skips it, looking at each one.
            Flood(
                name: "delimiter near-misses in the preamble", head: [], unit: crlf(cutShort.joined()),
                tail: crlf("\r\n") + part + crlf("--\(b)--\r\n")),
            Flood(
                name: "delimiter near-misses in the preamble", head: [], unit: crlf(preambleNearMisses.joined()),
                tail: crlf("\r\n") + part + crlf("--\(b)--\r\n"), mode: .lenient),
            Flood(
                name: "long folded headers", head: [], unit: crlf(folded), tail: crlf("--\(b)--\r\n"),
                limits: manyParts, unitIsAPart: true),
            Flood(
                name: "many parameters", head: [],
                unit: crlf("--\(b)\r\nContent-Disposition: form-data; name=\"a\"\(parameters)\r\n\r\nv\r\n"),
                tail: crlf("--\(b)--\r\n"), limits: manyParameters, unitIsAPart: true),
            Flood(
                name: "many tiny parts", head: [], unit: part, tail: crlf("--\(b)--\r\n"), limits: manyParts,
                unitIsAPart: true),
            Flood(
                name: "many tiny parts", head: [],
                unit: crlf("--\(b)\nContent-Disposition: form-data; name=\"a\"\n\nv\n"), tail: crlf("--\(b)--\n"),
                mode: .lenient, limits: manyParts, unitIsAPart: true),
            Flood(
                name: "CR/LF flood in a file", head: fileHead, unit: crlf("\r\n\r\r\n\n"), tail: close, limits: gzipped,
                gzipped: true),
            Flood(
                name: "many tiny parts", head: [], unit: part, tail: crlf("--\(b)--\r\n"), limits: gzipped,
                unitIsAPart: true, gzipped: true),
        ]
    }

    struct Run: Sendable {
        /// The parsing thread's CPU time.
        var duration: Duration
        var maxBuffered: Int
        var parts: Int

        /// Stores this run in `last` and returns its time.
        func recorded(in last: inout Run?) -> Duration {
            last = self
            return duration
        }
    }

    /// ``runNow(_:size:)`` on a thread of its own, off the cooperative pool (its CPU time is that thread's).
    static func run(_ flood: Flood, size: Int) async throws -> Run {
        try await onThreadOfItsOwn { try runNow(flood, size: size) }
    }

    /// Parses `flood` grown to about `size` bytes, fed in chunks of about 64 KiB.
    static func runNow(_ flood: Flood, size: Int) throws -> Run {
        let perChunk = max(1, 65536 / flood.unit.count)
        let block = Array([[UInt8]](repeating: flood.unit, count: perChunk).joined())
        let chunks = max(1, size / block.count)
        var parser = DecompressingMultipartParser(
            parser: try MultipartParser(
                boundary: MultipartBoundary(contentTypeBoundary: boundary), limits: flood.limits, mode: flood.mode),
            encoding: flood.gzipped ? .gzip : .identity)
        var compressor = try ZlibCompressor(format: .gzip, level: 1)
        var maxBuffered = 0
        var parts = 0
        func feed(_ bytes: [UInt8], finishing: Bool = false) throws {
            if !flood.gzipped { try parser.append(bytes[...]) }
            var input = bytes[...]
            while flood.gzipped {
                let chunk = input
                var compressed: [UInt8] = []
                let step = try compressed.append(capacity: 1 << 20) {
                    try compressor.compress(chunk.span, into: &$0, finishing: finishing)
                }
                try parser.append(compressed[...])
                input = input.dropFirst(step.consumed)
                if finishing ? step.isFinished : input.isEmpty { break }
            }
            while let event = try parser.next() {
                if case .partHeaders = event { parts += 1 }
            }
            maxBuffered = max(maxBuffered, parser.parser.bufferedByteCount)
        }
        let ((), duration) = try measureThreadCPUTime {
            try feed(flood.head)
            for _ in 0..<chunks { try feed(block) }
            try feed(flood.tail, finishing: true)
            try parser.finish()
        }
        return Run(duration: duration, maxBuffered: maxBuffered, parts: parts)
    }

    /// The time limit only stops a hang: a busy machine may take several times the idle one's wall time.
    @Test(.timeLimit(.minutes(10)), arguments: floods)
    func timeGrowsLinearlyAndMemoryStaysBounded(_ flood: Flood) async throws {
        let small = try await Self.run(flood, size: 1 << 20)
        var lastMedium: Run?
        var lastLarge: Run?
        let growth = try await linearGrowthRatio(
            limit: 8,
            medium: { try await Self.run(flood, size: 16 << 20).recorded(in: &lastMedium) },
            large: { try await Self.run(flood, size: 64 << 20).recorded(in: &lastLarge) })
        let medium = try #require(lastMedium)
        let large = try #require(lastLarge)
        print(
            "LinearTimeTests: \(flood.testDescription): CPU time 1 MB \(small.duration), 16 MB \(growth.medium), "
                + "64 MB \(growth.large), 64/16 = \(growth.ratio)")
        // Under 50 ms for 64 MB the ratio is noise (a skipped epilogue costs nanoseconds a chunk), and no quadratic
        // loop gets through 64 MB that fast.
        #expect(
            growth.ratio < 8 || growth.large < .milliseconds(50), "64 MB took \(growth.ratio)× the CPU time of 16 MB")
        // One chunk (the block) plus a header block plus a delimiter's worth of held-back bytes.
        let bound = 65536 + flood.unit.count + flood.limits.maxHeaderBytesPerPart + 512
        #expect(large.maxBuffered <= bound, "held \(large.maxBuffered) bytes")
        #expect(large.maxBuffered <= medium.maxBuffered + flood.unit.count, "held more for a larger body")
        if flood.unitIsAPart { #expect(large.parts > medium.parts) }
    }
}
