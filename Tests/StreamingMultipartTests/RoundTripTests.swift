import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// Random forms from the builder, fed to the parser in random chunkings, parse back to the same parts.
@Suite struct RoundTripTests {
    struct Expected {
        var name: String
        var filename: String?
        var contentType: String?
        var body: [UInt8]
    }

    /// Content that is hard for a parser: random bytes with CR, LF, `--`, and prefixes of the boundary spliced in.
    /// `wholeBoundary` splices in `--boundary` itself, which only in-memory parts may hold (the builder then draws
    /// a new boundary); a stream's bytes are not searched, so its content must not hold the boundary.
    static func trickyBytes(_ count: Int, boundary: String, wholeBoundary: Bool, random: inout SeededGenerator)
        -> [UInt8]
    {
        var bytes = random.bytes(count)
        var pieces: [[UInt8]] = [
            [13], [10], [13, 10], Array("\r\n--".utf8), Array("\r\n--\(boundary.dropLast())".utf8),
            Array("\r\r\n--\(boundary.prefix(5))".utf8),
        ]
        if wholeBoundary { pieces += [Array("--\(boundary)".utf8), Array("\n--\(boundary)".utf8)] }
        for _ in 0..<min(count / 8, 40) {
            let piece = pieces.randomElement(using: &random)!
            guard piece.count <= count else { continue }
            let at = Int.random(in: 0...(count - piece.count), using: &random)
            bytes.replaceSubrange(at..<(at + piece.count), with: piece)
        }
        if !wholeBoundary {
            // A near miss followed by the right random byte completes the boundary: break any such completion.
            let delimiter = Array("--\(boundary)".utf8)
            var index = 0
            while index + delimiter.count <= bytes.count {
                if bytes[index..<(index + delimiter.count)].elementsEqual(delimiter) {
                    bytes[index + delimiter.count - 1] ^= 0x20
                }
                index += 1
            }
        }
        return bytes
    }

    static func randomForm(_ random: inout SeededGenerator, maxSize: Int) throws -> (MultipartBody, [Expected]) {
        var body = MultipartBody()
        var expected: [Expected] = []
        for index in 0..<Int.random(in: 0...8, using: &random) {
            let size =
                Bool.random(using: &random)
                ? Int.random(in: 0...64, using: &random) : Int.random(in: 0...maxSize, using: &random)
            let inMemory = Bool.random(using: &random)
            let content = trickyBytes(size, boundary: body.boundary.value, wholeBoundary: inMemory, random: &random)
            let name = ["a", "field \(index)", "naïve \"quoted\"\r\n", "x[]"].randomElement(using: &random)!
            if inMemory {
                try body.append(.data(Data(content), name: name))
                expected.append(Expected(name: name, filename: nil, contentType: nil, body: content))
            } else {
                let filename = "f\(index).bin"
                try body.append(
                    .stream(name: name, filename: filename, length: size) { InputStream(data: Data(content)) })
                expected.append(
                    Expected(name: name, filename: filename, contentType: "application/octet-stream", body: content))
            }
        }
        return (body, expected)
    }

    @Test func randomFormsInRandomChunkings() throws {
        var random = SeededGenerator(seed: 2026)
        var limits = MultipartParser.Limits.default
        limits.maxFieldBytes = 2 << 20
        for form in 0..<300 {
            let large = form % 10 == 0  // up to 1 MiB a part, in chunks of about 4 KiB or 64 KiB
            let (body, expected) = try Self.randomForm(&random, maxSize: large ? 1 << 20 : 4096)
            let bytes = try body.bytes()
            var cuts: [Int] = []
            var position = 0
            let typical = large ? [4096, 65536][form / 10 % 2] : [1, 7, 100, 4096, 65536][form % 5]
            while position < bytes.count {
                position += Int.random(in: 1...(2 * typical), using: &random)
                cuts.append(min(position, bytes.count))
            }
            let outcome = parse(bytes, boundary: body.boundary.value, limits: limits, splitAt: cuts)
            guard case .parsed(let parts, let quirks) = outcome else {
                Issue.record("form \(form): \(outcome)")
                continue
            }
            #expect(quirks.isEmpty, "form \(form)")
            #expect(parts.count == expected.count, "form \(form)")
            for (part, want) in zip(parts, expected) {
                #expect(part.head.name == want.name, "form \(form)")
                #expect(part.head.filename == want.filename, "form \(form)")
                #expect(part.head.contentType == want.contentType, "form \(form)")
                #expect(part.body == want.body, "form \(form): part \(part.head.index) differs")
            }
        }
    }

    @Test func smallFormsAtEverySplit() throws {
        var random = SeededGenerator(seed: 7)
        for _ in 0..<20 {
            let (body, expected) = try Self.randomForm(&random, maxSize: 64)
            let parts = parseEveryChunking(try body.bytes(), boundary: body.boundary.value).parts
            #expect(parts?.map(\.body) == expected.map(\.body))
        }
    }
}
