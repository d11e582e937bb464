import Foundation
import MultipartTestSupport
import StreamingMultipart
import StreamingMultipartCrypto
import Testing

/// Files of several MiB, past the spool writer's 1 MiB batches, hashed with SHA-256 while they are written: the
/// digest and the bytes on disk match the file sent at every chunking, whether batches are cut by size (large
/// chunks: hashed on a task of their own beside the writes) or by count (tiny chunks: hashed in place), and when a
/// file starts in memory and outgrows the threshold.
@Suite struct SpoolDigestTests {
    static let files: [[UInt8]] = {
        var random = SeededGenerator(seed: 35)
        return [random.bytes(3 << 20 + 1), random.bytes(5 << 20 - 3), random.bytes(4 << 20)]
    }()

    static let body: MultipartBody = {
        var body = MultipartBody(boundary: try! MultipartBoundary("digest-test-boundary"))
        try! body.append(.text("before", name: "caption"))
        for (index, file) in files.enumerated() {
            try! body.append(.data(Data(file), name: "f\(index)", filename: "f\(index).bin"))
        }
        return body
    }()

    @Test(arguments: [(61, 0), (4096, 0), (65536, 0), ((1 << 20) + 7, 0), (1 << 30, 0), (65536, 300_000)])
    func digestsMatchAtEveryChunking(chunkSize: Int, memoryThreshold: Int) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var limits = MultipartSpooler.Limits.default
        limits.memoryThreshold = memoryThreshold
        limits.bodyTimeout = nil
        let spooler = MultipartSpooler(directory: folder.url, limits: limits, digest: SHA256Digest.self)
        let bytes = try Self.body.bytes()
        let chunks = chunkStream(bytes, size: chunkSize)
        try await spooler.withSpooledForm(chunks, contentType: Self.body.contentType) { (form) async throws in
            #expect(form.value(of: "caption") == "before")
            #expect(form.files.count == Self.files.count)
            for (file, sent) in zip(form.files, Self.files) {
                #expect(file.byteCount == Int64(sent.count))
                #expect(file.digest?.hex == sha256Hex(sent), "\(file.name) at \(chunkSize)-byte chunks")
                #expect(!file.isInMemory)
                #expect(try file.contents() == sent, "\(file.name) on disk at \(chunkSize)-byte chunks")
            }
        }
        #expect(try folder.contents() == [])
    }
}
