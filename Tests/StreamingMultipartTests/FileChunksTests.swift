import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// `FileChunks`: a file read a chunk at a time, into the async parts sequence.
@Suite struct FileChunksTests {
    @Test(arguments: [1, 7, 4096, 64 * 1024, 1 << 20])
    func chunksAreTheFileInOrder(chunkSize: Int) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var random = SeededGenerator(seed: 5)
        let bytes = random.bytes(chunkSize == 1 ? 3000 : 300_000)
        let file = try folder.file("f.bin", contents: bytes)
        var joined: [UInt8] = []
        var largest = 0
        for try await chunk in FileChunks(path: file.path, chunkSize: chunkSize) {
            #expect(!chunk.isEmpty)
            largest = max(largest, chunk.count)
            joined += chunk
        }
        #expect(joined == bytes)
        #expect(largest <= chunkSize)
    }

    @Test func aBodyOnDiskParsesIntoParts() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var body = MultipartBody()
        try body.append(.text("alpha", name: "a"))
        try body.append(.data(Data(repeating: 9, count: 500_000), name: "big", filename: "big.bin"))
        let file = folder.url.appendingPathComponent("upload.body")
        try body.write(to: file)
        var seen: [(String, Int)] = []
        for try await part in try FileChunks(path: file.path, chunkSize: 4096).multipartParts(boundary: body.boundary) {
            var size = 0
            for try await bytes in part.body { size += bytes.count }
            seen.append((part.head.name, size))
        }
        #expect(seen.map(\.0) == ["a", "big"] && seen.map(\.1) == [5, 500_000])
    }

    @Test func anEmptyFileHasNoChunks() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("empty", contents: [])
        var iterator = FileChunks(path: file.path).makeAsyncIterator()
        #expect(try await iterator.next() == nil)
        #expect(try await iterator.next() == nil)
    }

    @Test func aMissingFileOrAFolderIsAClearError() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        for (path, code) in [
            (folder.url.appendingPathComponent("missing").path, MultipartError.Code.fileNotFound),
            (folder.url.path, .notARegularFile),
        ] {
            var iterator = FileChunks(path: path).makeAsyncIterator()
            let error = await #expect(throws: MultipartError.self) { _ = try await iterator.next() }
            #expect(error?.code == code, "\(path)")
        }
    }
}
