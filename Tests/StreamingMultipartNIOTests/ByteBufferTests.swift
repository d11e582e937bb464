import Foundation
import MultipartTestSupport
import NIOCore
import StreamingMultipart
import StreamingMultipartNIO
import Testing

/// StreamingMultipartNIO: the builder's body as ByteBuffers, and ByteBuffer bodies parsed and spooled.
@Suite struct ByteBufferTests {
    func sampleBody(in folder: TemporaryFolder) throws -> MultipartBody {
        var random = SeededGenerator(seed: 11)
        let file = try folder.file("photo.bin", contents: random.bytes(200_000))
        var body = MultipartBody()
        try body.append(.text("Sunset", name: "caption"))
        try body.append(.file(at: file, name: "photo"))
        try body.append(.data(Data(random.bytes(70_000)), name: "raw", filename: "raw.bin"))
        return body
    }

    func buffers(of bytes: [UInt8], size: Int) -> AsyncStream<ByteBuffer> {
        AsyncStream { continuation in
            for start in stride(from: 0, to: bytes.count, by: size) {
                continuation.yield(ByteBuffer(bytes: bytes[start..<min(start + size, bytes.count)]))
            }
            continuation.finish()
        }
    }

    @Test(arguments: [1, 1000, 65536])
    func theBodyAsByteBuffersIsTheBodyEveryTime(size: Int) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let body = try sampleBody(in: folder)
        let expected = try body.bytes()
        let sequence = body.byteBuffers(size: size)
        #expect(sequence.contentLength == Int64(expected.count))
        // A retry sends the whole body again. The first pass lets go of each buffer (the iterator reads into it
        // again), the second keeps them all: each must keep its bytes.
        for keeps in [false, true] {
            var bytes: [UInt8] = []
            var kept: [ByteBuffer] = []
            var count = 0
            for try await buffer in sequence {
                #expect(buffer.readableBytes <= size && buffer.readableBytes > 0)
                bytes += buffer.readableBytesView
                if keeps { kept.append(buffer) }
                count += 1
            }
            #expect(bytes == expected)
            #expect(count == (expected.count + size - 1) / size)
            #expect(!keeps || kept.flatMap { Array($0.readableBytesView) } == expected, "kept buffers changed")
        }
    }

    /// From an offset, the buffers are the rest of the body, their length what is left, and progress counts on from
    /// the offset to the whole length; an offset past the end fails the first `next()`.
    @Test func theBodyFromAnOffsetIsItsRest() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let body = try sampleBody(in: folder)
        let whole = try body.bytes()
        let length = Int64(whole.count)
        for offset in [0, 1, 150, length / 2, length - 1, length] {
            let last = Locked<MultipartBody.Progress?>(nil)
            let buffers = body.byteBuffers(startingAt: offset, size: 10_000) { last.set($0) }
            #expect(buffers.contentLength == length - offset)
            var rest: [UInt8] = []
            for try await buffer in buffers { rest += buffer.readableBytesView }
            #expect(rest == Array(whole[Int(offset)...]), "from \(offset)")
            if offset < length { #expect(last.get()?.completedBytes == length && last.get()?.totalBytes == length) }
        }
        await #expect(throws: MultipartError.self) {
            for try await _ in body.byteBuffers(startingAt: length + 1) {}
        }
    }

    @Test func aCompressedBodyHasNoLengthAndInflatesToTheBody() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let body = try sampleBody(in: folder)
        let sequence = body.byteBuffers(compression: .gzip)
        #expect(sequence.contentLength == nil)
        var gzipped: [UInt8] = []
        for try await buffer in sequence { gzipped += buffer.readableBytesView }
        var parts: [String: [UInt8]] = [:]
        for try await part in try buffers(of: gzipped, size: 4096).multipartParts(
            boundary: body.boundary, contentEncoding: "gzip")
        {
            parts[part.head.name] = try await part.body.collect(upTo: 1 << 20)
        }
        #expect(parts["caption"] == Array("Sunset".utf8))
        #expect(parts["photo"]?.count == 200_000)
    }

    /// `byteBuffers` is `chunks` with another chunk type: the same bytes in the same sizes, the same throttle and
    /// progress, `next(isolation:)`, and the same closing on cancellation.
    @Test func byteBuffersFollowTheRulesOfChunks() async throws {
        var body = MultipartBody(boundary: try MultipartBoundary("same-rules"))
        try body.append(.text("caption", name: "a"))
        try body.append(.data(Data(repeating: 7, count: 2500), name: "d", filename: "d.bin"))
        let throttle = MultipartBody.Throttle(packetSize: 1000, delay: .milliseconds(1))
        let arrayProgress = ProgressLog()
        let bufferProgress = ProgressLog()
        var arrays: [[UInt8]] = []
        for try await chunk in body.chunks(size: 4096, throttle: throttle, progress: { arrayProgress.add($0) }) {
            arrays.append(chunk)
        }
        var buffers: [[UInt8]] = []
        let sequence = body.byteBuffers(size: 4096, throttle: throttle, progress: { bufferProgress.add($0) })
        var iterator = sequence.makeAsyncIterator()
        while let buffer = try await iterator.next(isolation: #isolation) {
            buffers.append(Array(buffer.readableBytesView))
        }
        #expect(buffers == arrays)
        #expect(arrays.allSatisfy { $0.count <= 1000 })
        #expect(bufferProgress.completed == arrayProgress.completed)
        #expect(bufferProgress.completed.last == body.contentLength)
        #expect(sequence.contentLength == body.chunks().contentLength)
        #expect(body.byteBuffers(compression: .gzip).contentLength == nil)
    }

    @Test(.enabled(if: canListOpenFiles, "lists open files through /proc/self/fd (Linux only)"))
    func cancellingTheTaskClosesTheFile() async throws {
        try await expectCancellingTheTaskClosesTheFile { $0.byteBuffers(size: 1024) }
    }

    @Test func aBodyThatFailsMidwayThrows() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("shrinks.bin", contents: [UInt8](repeating: 1, count: 300_000))
        var body = MultipartBody()
        try body.append(.file(at: file, name: "f"))
        try Data(repeating: 1, count: 10).write(to: file)  // shorter than appended
        var iterator = body.byteBuffers().makeAsyncIterator()
        await #expect(throws: MultipartError.self) {
            while try await iterator.next() != nil {}
        }
    }

    @Test(arguments: [1, 777, 65536])
    func byteBufferBodiesParseAndSpoolAsArraysDo(size: Int) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let body = try sampleBody(in: folder)
        let bytes = try body.bytes()
        var names: [String] = []
        var lengths: [Int] = []
        for try await part in try buffers(of: bytes, size: size).multipartParts(contentType: body.contentType) {
            names.append(part.head.name)
            var length = 0
            for try await chunk in part.body { length += chunk.count }
            lengths.append(length)
        }
        #expect(names == ["caption", "photo", "raw"])
        #expect(lengths == [6, 200_000, 70_000])

        let spool = folder.url.appendingPathComponent("spool")
        try FileManager.default.createDirectory(at: spool, withIntermediateDirectories: true)
        try await MultipartSpooler(directory: spool, limits: .untimed).withSpooledForm(
            buffers(of: bytes, size: size), contentType: body.contentType
        ) { form throws in
            #expect(form.value(of: "caption") == "Sunset")
            var random = SeededGenerator(seed: 11)
            let photo = random.bytes(200_000)
            #expect(try form.file(named: "photo")?.contents() == photo)
            #expect(try form.file(named: "raw")?.contents() == random.bytes(70_000))
            #expect(form.files.map(\.byteCount) == [200_000, 70_000])
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool.path) == [])
    }
}

/// The progress a sequence reported, in order.
final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int64] = []

    func add(_ progress: MultipartBody.Progress) { lock.withLock { values.append(progress.completedBytes) } }

    var completed: [Int64] { lock.withLock { values } }
}
