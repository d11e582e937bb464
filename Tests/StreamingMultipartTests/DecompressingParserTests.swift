import Foundation
import MultipartTestSupport
import Testing

@testable import StreamingMultipart

/// The parser behind the zlib stage: the same parts from a compressed body, and bombs stopped.
@Suite struct DecompressingParserTests {
    /// Names and body sizes of the parts, parsing `body` in chunks of `chunk`.
    static func parts(
        _ body: [UInt8], encoding: String?, boundary: String = "zlib-test-7", limits: MultipartParser.Limits = .default,
        chunk: Int = 65536
    ) throws -> [String] {
        var parser = try DecompressingMultipartParser(
            contentType: "multipart/form-data; boundary=\(boundary)", contentEncoding: encoding, limits: limits)
        var found: [String] = []
        var size = 0
        var offset = 0
        repeat {
            let end = min(offset + chunk, body.count)
            try parser.append(body[offset..<end])
            offset = end
            while let event = try parser.next() {
                switch event {
                case .partHeaders: size = 0
                case .end: break
                case .bodyBytes(let bytes): size += bytes.count
                case .partEnd: found.append("\(found.count):\(size)")
                }
                #expect(parser.parser.bufferedByteCount <= 2 * 65536 + 1024, "holds \(parser.parser.bufferedByteCount)")
            }
        } while offset < body.count
        try parser.finish()
        return found
    }

    static func form() throws -> [UInt8] {
        var body = MultipartBody(boundary: try MultipartBoundary("zlib-test-7"))
        try body.append(.text("alpha", name: "a"))
        try body.append(.data(Data(ZlibTests.sample(400_000, seed: 12)), name: "big", filename: "big.txt"))
        try body.append(.text("charlie", name: "c"))
        return try body.bytes()
    }

    @Test(arguments: [
        ("gzip", CompressionFormat.gzip), ("x-gzip", .gzip), ("deflate", .zlib), (" Deflate ", .rawDeflate),
    ])
    func aCompressedBodyGivesTheSamePartsAtEveryChunking(encoding: String, format: CompressionFormat) throws {
        let plain = try Self.form()
        let expected = try Self.parts(plain, encoding: nil)
        #expect(expected == ["0:5", "1:400000", "2:7"])
        let compressed = try ZlibTests.compress(plain, format: format)
        for chunk in [1, 7, 1000, 65536, 1 << 22] {
            #expect(try Self.parts(compressed, encoding: encoding, chunk: chunk) == expected, "\(encoding) \(chunk)")
        }
    }

    @Test(arguments: ["br", "compress", "gzip, gzip", "zstd"])
    func otherCodingsAreAClearError(encoding: String) throws {
        let error = #expect(throws: MultipartError.self) {
            _ = try DecompressingMultipartParser(
                contentType: "multipart/form-data; boundary=b", contentEncoding: encoding)
        }
        #expect(error?.code == .unsupportedContentEncoding)
        #expect(error?.message.contains(encoding.lowercased()) == true)
    }

    /// 10,000 gzip members of 1 MiB of zeros after a part's head: about 10 MB that inflate to 10 GiB. The ratio
    /// limit stops it within the first megabytes, in memory bounded by the block size.
    @Test(.timeLimit(.minutes(5)))
    func aGzipBombStopsAtTheRatioLimit() throws {
        let head = try ZlibTests.compress(
            Array("--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"z\"\r\n\r\n".utf8), format: .gzip)
        let zeros = try ZlibTests.compress([UInt8](repeating: 0, count: 1 << 20), format: .gzip)
        var parser = try DecompressingMultipartParser(
            contentType: "multipart/form-data; boundary=b", contentEncoding: "gzip")
        var thrown: MultipartError?
        var inflated = 0
        do {
            try parser.append(head[...])
            for _ in 0..<10_000 {
                try parser.append(zeros[...])
                while let event = try parser.next() {
                    if case .bodyBytes(let bytes) = event { inflated += bytes.count }
                }
            }
        } catch let error as MultipartError {
            thrown = error
        }
        #expect(thrown?.code == .limitExceeded)
        #expect(thrown?.message.contains("maxDecompressionRatio") == true, "\(String(describing: thrown))")
        #expect(inflated < 8 << 20, "inflated \(inflated) bytes before stopping")
    }

    @Test func theDecompressedSizeLimitHoldsWhenTheRatioIsRaised() throws {
        var limits = MultipartParser.Limits.default
        limits.maxDecompressionRatio = 100_000
        limits.maxDecompressedBytes = 3 << 20
        var plain = Array("--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"z\"\r\n\r\n".utf8)
        plain += [UInt8](repeating: 0, count: 8 << 20) + Array("\r\n--b--\r\n".utf8)
        let error = #expect(throws: MultipartError.self) {
            _ = try Self.parts(
                try ZlibTests.compress(plain, format: .gzip), encoding: "gzip", boundary: "b", limits: limits)
        }
        #expect(error?.code == .limitExceeded)
        #expect(error?.message.contains("maxDecompressedBytes") == true)
    }

    @Test func truncatedOrTrailingCompressedInputIsAnError() throws {
        let compressed = try ZlibTests.compress(try Self.form(), format: .gzip)
        let cut = #expect(throws: MultipartError.self) {
            _ = try Self.parts(Array(compressed.prefix(compressed.count - 10)), encoding: "gzip")
        }
        #expect(cut?.code == .invalidCompressedData)
        let trailing = #expect(throws: MultipartError.self) {
            _ = try Self.parts(compressed + Array("junk".utf8), encoding: "gzip")
        }
        #expect(trailing?.code == .invalidCompressedData)
    }

    /// `finish()` before the events are drained is refused, and loses none of them: the caller drains `next()` and
    /// calls `finish()` again, and sees every part.
    @Test func finishBeforeDrainingLosesNoEvent() throws {
        let compressed = try ZlibTests.compress(try Self.form(), format: .gzip)
        var parser = try DecompressingMultipartParser(
            contentType: "multipart/form-data; boundary=zlib-test-7", contentEncoding: "gzip")
        try parser.append(compressed[...])
        var found: [String] = []
        var size = 0
        func drain() throws {
            while let event = try parser.next() {
                switch event {
                case .partHeaders: size = 0
                case .bodyBytes(let bytes): size += bytes.count
                case .partEnd: found.append("\(found.count):\(size)")
                case .end: break
                }
            }
        }
        _ = try parser.next()  // the first part's head; the rest is still to be read
        size = 0
        let early = #expect(throws: MultipartError.self) { try parser.finish() }
        #expect(early?.code == .invalidState && early?.message.contains("drain next()") == true)
        try drain()
        try parser.finish()
        #expect(found == ["0:5", "1:400000", "2:7"])
    }

    @Test func identityIsThePlainParser() throws {
        let plain = try Self.form()
        #expect(try Self.parts(plain, encoding: "identity", chunk: 100) == ["0:5", "1:400000", "2:7"])
    }

    /// The async parts API takes the coding too: a gzip body on disk, read with FileChunks.
    @Test func asyncPartsOfACompressedFile() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("form.gz", contents: try ZlibTests.compress(try Self.form(), format: .gzip))
        var found: [(String, Int)] = []
        let boundary = try MultipartBoundary("zlib-test-7")
        for try await part in try FileChunks(path: file.path, chunkSize: 1000).multipartParts(
            boundary: boundary, contentEncoding: "gzip")
        {
            var size = 0
            for try await bytes in part.body { size += bytes.count }
            found.append((part.head.name, size))
        }
        #expect(found.map(\.0) == ["a", "big", "c"] && found.map(\.1) == [5, 400_000, 7])
        let error = #expect(throws: MultipartError.self) {
            _ = try FileChunks(path: file.path).multipartParts(boundary: boundary, contentEncoding: "br")
        }
        #expect(error?.code == .unsupportedContentEncoding)
    }
}
