import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// Replays every input of `Fixtures/fuzz-corpus` (the fuzzer's seeds and the inputs it once crashed on) the way
/// `Fuzz/FuzzParser.swift` reads them, with the same small limits: every chunking must agree.
@Suite struct FuzzCorpusTests {
    @Test func everyCorpusInputParsesTheSameInEveryChunking() throws {
        let folder = Repository.fixtures.appendingPathComponent("fuzz-corpus")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(names.count >= 10)
        var limits = MultipartParser.Limits.default
        limits.maxHeaderBytesPerPart = 512
        limits.maxParts = 64
        limits.maxFieldBytes = 4096
        for name in names {
            let input = [UInt8](try Data(contentsOf: folder.appendingPathComponent(name)))
            let newline = input.firstIndex(of: 0x0A) ?? input.endIndex
            let contentType = String(decoding: input[..<newline], as: UTF8.self)
            _ = try? ContentDisposition(parsing: contentType)
            guard let boundary = try? MultipartBoundary(contentType: contentType), newline + 1 < input.count else {
                continue
            }
            let control = input[newline + 1]
            let body = Array(input[(newline + 2)...])
            let mode: MultipartParser.Mode = control & 1 == 0 ? .strict : .lenient
            let whole = parse(body, boundary: boundary.value, mode: mode, limits: limits, splitAt: [])
            for size in [1, 2, 3, 7, 16, 64, 1000] {
                let chunked = parse(
                    body, boundary: boundary.value, mode: mode, limits: limits,
                    splitAt: Array(stride(from: size, to: body.count, by: size)))
                #expect(chunked == whole, "\(name): chunks of \(size) give \(chunked), whole gives \(whole)")
            }
        }
    }
}
