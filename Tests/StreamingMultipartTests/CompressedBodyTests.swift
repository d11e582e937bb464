import Foundation
import MultipartTestSupport
import Testing

@testable import StreamingMultipart

/// A compressed body through every output the builder has, and back through the decompressing parser.
@Suite struct CompressedBodyTests {
    func body() throws -> MultipartBody {
        var body = MultipartBody(boundary: try MultipartBoundary("zlib-test-7"))
        try body.append(.text("alpha", name: "a"))
        try body.append(.data(Data(ZlibTests.sample(300_000, seed: 21)), name: "big", filename: "big.txt"))
        try body.append(.file(at: Repository.input("notes.txt"), name: "notes"))
        try body.append(.stream(name: "s", length: 4) { InputStream(data: Data("once".utf8)) })
        return body
    }

    static let formats: [(MultipartBody.Compression, CompressionFormat)] = [
        (.gzip, .gzip), (.deflate, .zlib), (.gzip(level: 1), .gzip), (.deflate(level: 9), .zlib),
    ]

    @Test(arguments: [1, 7, 4096, 65536, 1 << 20])
    func readIntoGivesTheCompressedBodyAtEveryReadSize(readSize: Int) throws {
        let body = try body()
        let plain = try body.bytes()
        for (compression, format) in Self.formats {
            var reader = body.makeReader(compression: compression)
            #expect(reader.contentLength == nil)
            let compressed = try reader.readAll(bufferSize: readSize)
            #expect(reader.isFinished && reader.bytesRead == Int64(compressed.count))
            #expect(reader.progress.completedBytes == Int64(plain.count))
            #expect(try ZlibTests.decompress(compressed, format: format) == plain, "\(compression) \(readSize)")
        }
    }

    @Test func theStreamTheChunksAndTheFileCarryTheSameBytes() async throws {
        let body = try body()
        let plain = try body.bytes()
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        for (compression, format) in Self.formats {
            let streamed = try readStream(body.makeInputStream(compression: compression), maxLength: 1 << 24)
            #expect(try ZlibTests.decompress(streamed, format: format) == plain)
            var chunked: [UInt8] = []
            let chunks = body.chunks(size: 1000, compression: compression)
            #expect(chunks.contentLength == nil)
            for try await chunk in chunks { chunked += chunk }
            #expect(chunked == streamed)
            let file = folder.url.appendingPathComponent("body.gz")
            let length = try body.write(to: file, compression: compression)
            let written = [UInt8](try Data(contentsOf: file))
            #expect(length == Int64(written.count) && written == streamed)
        }
    }

    /// Built compressed, parsed decompressing: the same parts as the plain body, at every chunking.
    @Test func theDecompressingParserReadsWhatTheBuilderCompresses() throws {
        let body = try body()
        let expected = try DecompressingParserTests.parts(try body.bytes(), encoding: nil)
        for compression in [MultipartBody.Compression.gzip, .deflate] {
            var reader = body.makeReader(compression: compression)
            let compressed = try reader.readAll()
            for chunk in [1, 100, 65536] {
                #expect(
                    try DecompressingParserTests.parts(compressed, encoding: compression.contentEncoding, chunk: chunk)
                        == expected)
            }
        }
    }
}
