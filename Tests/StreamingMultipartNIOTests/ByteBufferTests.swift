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
        stream(
            of: stride(from: 0, to: bytes.count, by: size).map {
                ByteBuffer(bytes: bytes[$0..<min($0 + size, bytes.count)])
            })
    }

    func stream(of buffers: [ByteBuffer]) -> AsyncStream<ByteBuffer> {
        AsyncStream { continuation in
            for buffer in buffers { continuation.yield(buffer) }
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

extension ByteBufferTests {
    /// The buffers of `bytes`, `size` bytes each, and the addresses of their bytes, in address order (the caller keeps
    /// the buffers, so the addresses stay theirs).
    func lentBuffers(of bytes: [UInt8], size: Int) -> (buffers: [ByteBuffer], regions: [Range<Int>]) {
        let buffers = stride(from: 0, to: bytes.count, by: size).map {
            ByteBuffer(bytes: bytes[$0..<min($0 + size, bytes.count)])
        }
        let regions = buffers.map { buffer in
            buffer.withUnsafeReadableBytes {
                Int(bitPattern: $0.baseAddress)..<(Int(bitPattern: $0.baseAddress) + $0.count)
            }
        }
        return (buffers, regions.sorted { $0.lowerBound < $1.lowerBound })
    }

    /// The region of `sorted` (ordered by address) that holds `address`, found by bisection.
    func region(holding address: Int, in sorted: [Range<Int>]) -> Range<Int>? {
        var (low, high) = (0, sorted.count)
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle].lowerBound <= address { low = middle + 1 } else { high = middle }
        }
        guard low > 0, sorted[low - 1].contains(address) else { return nil }
        return sorted[low - 1]
    }

    /// A ByteBuffer body's parts come out as regions of the buffers they came in (`ByteBuffer(bytes)` a slice of
    /// that buffer): no byte is copied but the few the parser joins across two buffers, and the parts are those the
    /// parser reads from the same bytes as arrays.
    @Test(arguments: [1, 777, 65536])
    func aByteBufferBodyComesOutAsRegionsOfItsBuffers(size: Int) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let body = try sampleBody(in: folder)
        let bytes = try body.bytes()
        let (buffers, regions) = lentBuffers(of: bytes, size: size)
        let source = stream(of: buffers)
        var parts: [(String, [UInt8])] = []
        var (inPlace, copied) = (0, 0)
        for try await part in try source.multipartParts(contentType: body.contentType) {
            var content: [UInt8] = []
            for try await lent in part.body {  // LentBytes
                let start = lent.withUnsafeBytes { Int(bitPattern: $0.baseAddress) }
                let buffer = ByteBuffer(lent)
                #expect(buffer.readableBytesView.elementsEqual(lent))
                let bufferStart = buffer.withUnsafeReadableBytes { Int(bitPattern: $0.baseAddress) }
                if let region = region(holding: start, in: regions), start + lent.count <= region.upperBound {
                    inPlace += lent.count
                    #expect(bufferStart == start, "ByteBuffer(bytes) is a slice of the buffer the bytes came in")
                } else {
                    copied += lent.count
                    #expect(bufferStart != start, "bytes the parser copied make a buffer of their own")
                }
                content += lent
            }
            parts.append((part.head.name, content))
        }
        var expected: [(String, [UInt8])] = []
        let arrays = AsyncStream<[UInt8]> { continuation in
            continuation.yield(bytes)
            continuation.finish()
        }
        for try await part in try arrays.multipartParts(contentType: body.contentType) {
            expected.append((part.head.name, try await part.body.collect(upTo: 1 << 20)))
        }
        #expect(parts.map(\.0) == expected.map(\.0))
        #expect(parts.map(\.1) == expected.map(\.1))
        #expect(inPlace + copied == 270_006)
        if size >= 777 {
            // At most a delimiter's start and its line break at each buffer's end.
            #expect(copied <= buffers.count * 200, "copied \(copied) of \(inPlace + copied) bytes")
        }
    }

    /// The files inside a multipart/mixed part of a ByteBuffer body parse from the outer part's lent bytes.
    @Test func mixedPartsOfAByteBufferBodyParse() async throws {
        let inner =
            "--in\r\nContent-Disposition: attachment; filename=\"a.txt\"\r\n\r\nAAA\r\n"
            + "--in\r\nContent-Disposition: attachment; filename=\"b.txt\"\r\n\r\nBB\r\n--in--\r\n"
        let outer =
            "--out\r\nContent-Disposition: form-data; name=\"files\"\r\n"
            + "Content-Type: multipart/mixed; boundary=in\r\n\r\n\(inner)\r\n--out--\r\n"
        for size in [1, 5, 64, 4096] {
            var files: [String] = []
            for try await part in try buffers(of: Array(outer.utf8), size: size).multipartParts(boundary: .init("out"))
            {
                for try await file in try part.mixedParts() {
                    let content = try await file.body.collect(upTo: 100)
                    files.append(
                        "\(file.head.name)/\(file.head.filename ?? ""): \(String(decoding: content, as: UTF8.self))")
                }
            }
            #expect(files == ["files/a.txt: AAA", "files/b.txt: BB"], "buffers of \(size) bytes")
        }
    }
}

/// A store that keeps each file's bytes and the address of every piece it was handed, to tell whether the spooler
/// copied them on the way.
final class AddressRecordingStore: MultipartFileStore, @unchecked Sendable {
    private let lock = NSLock()
    private var pieces: [(address: Int, count: Int)] = []
    private var files: [String: [UInt8]] = [:]

    var recorded: [(address: Int, count: Int)] { lock.withLock { pieces } }
    func file(_ key: String) -> [UInt8]? { lock.withLock { files[key] } }

    func begin(_ file: MultipartStoreFile) async throws -> any MultipartStoreWriter {
        Writer(store: self, key: file.name)
    }
    func remove(_ object: MultipartStoredObject) async throws {}

    final class Writer: MultipartStoreWriter, @unchecked Sendable {
        let store: AddressRecordingStore
        let key: String

        init(store: AddressRecordingStore, key: String) {
            self.store = store
            self.key = key
        }

        func append(_ bytes: MultipartBytes) async throws {
            let address = bytes.withSpan { span in span.withUnsafeBufferPointer { Int(bitPattern: $0.baseAddress) } }
            store.lock.withLock {
                store.pieces.append((address, bytes.count))
                store.files[key, default: []] += bytes.arraySlice
            }
        }

        func finish(byteCount: Int64, digest: SpooledFile.Digest?) async throws -> MultipartStoredObject {
            MultipartStoredObject(key: key, location: key)
        }

        func abort() async {}
    }
}

extension ByteBufferTests {
    /// A ByteBuffer body's files reach the store as regions of the buffers they came in: the spooler copies none of
    /// their bytes but the few the parser joins across two buffers (and those it keeps in memory before a file
    /// outgrows the memory threshold), and hashes them all.
    @Test(arguments: [777, 65536])
    func aByteBufferBodySpoolsIntoTheStoreWithoutACopy(size: Int) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let body = try sampleBody(in: folder)
        let bytes = try body.bytes()
        let (buffers, regions) = lentBuffers(of: bytes, size: size)
        let store = AddressRecordingStore()
        var limits = MultipartSpooler.Limits.untimed
        limits.memoryThreshold = 0
        let form = try await MultipartSpooler(store: store, limits: limits, digest: FNV1aDigest.self).spool(
            stream(of: buffers), contentType: body.contentType)
        var random = SeededGenerator(seed: 11)
        let (photo, raw) = (random.bytes(200_000), random.bytes(70_000))
        #expect(store.file("photo") == photo)
        #expect(store.file("raw") == raw)
        #expect(form.files.map(\.byteCount) == [200_000, 70_000])
        let digests = [photo, raw].map { file in
            var digest = FNV1aDigest()
            digest.update(file.span)
            return digest.finalize()
        }
        #expect(form.files.map { $0.digest?.bytes } == digests)
        let inPlace = store.recorded.filter { piece in
            region(holding: piece.address, in: regions).map { piece.address + piece.count <= $0.upperBound } ?? false
        }
        let copied = store.recorded.map(\.count).reduce(0, +) - inPlace.map(\.count).reduce(0, +)
        #expect(copied <= buffers.count * 200, "copied \(copied) of 270,000 bytes on the way to the store")
    }
}

/// The progress a sequence reported, in order.
final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int64] = []

    func add(_ progress: MultipartBody.Progress) { lock.withLock { values.append(progress.completedBytes) } }

    var completed: [Int64] { lock.withLock { values } }
}
