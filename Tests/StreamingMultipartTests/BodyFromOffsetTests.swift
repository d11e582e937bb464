import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// `makeReader(startingAt:)` produces exactly the bytes a whole read produces from that offset on, whatever part the
/// offset falls in, and says why when it cannot.
@Suite struct BodyFromOffsetTests {
    /// One part of each kind, with contents that hold CR, LF and a prefix of the boundary's delimiter.
    func mixedBody(_ folder: TemporaryFolder, fileSize: Int, seed: UInt64 = 5) throws -> MultipartBody {
        var random = SeededGenerator(seed: seed)
        var body = MultipartBody()
        try body.append(.text("Grüße\r\n--", name: "caption"))
        try body.append(.data(Data(random.bytes(300)), name: "thumb", filename: "t.bin"))
        let file = try folder.file("photo.bin", contents: random.bytes(fileSize))
        try body.append(.file(at: file, name: "photo"))
        let streamed = Data(random.bytes(700))
        try body.append(.stream(name: "log", length: streamed.count) { InputStream(data: streamed) })
        try body.append(.text("", name: "empty"))
        return body
    }

    func read(_ body: MultipartBody, from offset: Int64, bufferSize: Int) throws -> [UInt8] {
        var reader = try body.makeReader(startingAt: offset)
        return try reader.readAll(bufferSize: bufferSize)
    }

    @Test(arguments: [1, 7, 64 * 1024])
    func everyOffsetOfASmallBodyGivesTheRestOfAWholeRead(bufferSize: Int) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let body = try mixedBody(folder, fileSize: 500)
        let whole = try body.bytes()
        #expect(Int64(whole.count) == body.contentLength)
        for offset in 0...whole.count {
            let rest = try read(body, from: Int64(offset), bufferSize: bufferSize)
            #expect(rest == Array(whole[offset...]), "from offset \(offset)")
        }
    }

    /// A boundary the caller chose is watched for in file contents from the offset on: a file that holds it fails
    /// the read from any offset before the boundary's last byte, and reads cleanly from after it.
    @Test func aChosenBoundaryIsWatchedFromTheOffset() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let content = Array("0123456789\r\n--XYZ-boundary tail".utf8)
        var body = try MultipartBody(boundary: MultipartBoundary("XYZ-boundary"))
        try body.append(.file(at: try folder.file("f.txt", contents: content), name: "f"))
        let headLength =
            try #require(body.contentLength) - Int64(content.count) - Int64("\r\n--XYZ-boundary--\r\n".utf8.count)
        let boundaryEnd = headLength + Int64(content.count - " tail".utf8.count)
        for offset in [0, headLength, boundaryEnd - 1] {
            let error = #expect(throws: MultipartError.self) { try read(body, from: offset, bufferSize: 4096) }
            #expect(error?.code == .boundaryInContent, "from \(offset)")
        }
        #expect(try read(body, from: boundaryEnd, bufferSize: 4096).starts(with: Array(" tail".utf8)))
    }

    /// A 6 MiB body read from 200 random offsets and from each part's first and last bytes: each read is the rest of
    /// the whole one, its length and progress count from the offset.
    @Test func randomOffsetsOfALargeBody() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let body = try mixedBody(folder, fileSize: 6 << 20, seed: 9)
        let length = try #require(body.contentLength)
        var random = SeededGenerator(seed: 21)
        let offsets = (0..<200).map { _ in Int64.random(in: 0...length, using: &random) } + [0, length - 1, length]
        // Over a gigabyte read and compared in a debug build: on a thread of its own, not the cooperative pool's.
        let wrong = try await onThreadOfItsOwn {
            let whole = try body.bytes()
            return try offsets.filter { offset in
                var reader = try body.makeReader(startingAt: offset)
                let placed =
                    reader.contentLength == length - offset && reader.progress.completedBytes == offset
                    && reader.progress.totalBytes == length
                let rest = try reader.readAll(bufferSize: 100_000)
                return !placed || rest != Array(whole[Int(offset)...]) || reader.progress.completedBytes != length
                    || reader.bytesRead != length - offset
            }
        }
        #expect(wrong.isEmpty, "offsets whose read is not the rest of the body, or whose counts are off: \(wrong)")
    }

    /// A stream without a length: the body can be read from its start, not past it (no later offset is known).
    @Test func aStreamWithoutALengthCannotBeResumedPastItsStart() throws {
        var body = MultipartBody()
        try body.append(.text("a", name: "a"))
        let data = Data(repeating: 7, count: 1000)
        try body.append(.stream(name: "s") { InputStream(data: data) })
        let whole = try body.bytes()
        let start = try #require(whole.indices.first { whole[$0...].starts(with: Array("\r\n\r\n".utf8) + [7]) }) + 4
        #expect(try read(body, from: Int64(start), bufferSize: 4096) == Array(whole[start...]))
        #expect(try read(body, from: 3, bufferSize: 4096) == Array(whole[3...]))
        let error = #expect(throws: MultipartError.self) { _ = try body.makeReader(startingAt: Int64(start + 1)) }
        #expect(error?.code == .cannotResume)
        #expect(error?.partIndex == 1)
        #expect(error?.message.contains("part 2 is a stream without a length") == true, "\(error?.message ?? "")")
    }

    @Test func aStreamThatCanBeReadOnceCannotBeResumedInsideIt() throws {
        var body = MultipartBody()
        try body.append(.stream(InputStream(data: Data(count: 100)), name: "once", length: 100))
        let error = #expect(throws: MultipartError.self) { _ = try body.makeReader(startingAt: 150) }
        #expect(error?.code == .cannotResume)
        #expect(error?.message.contains("can be read once") == true)
    }

    @Test func offsetsOutsideTheBodyAreRefused() throws {
        var body = MultipartBody()
        try body.append(.text("v", name: "f"))
        let length = try #require(body.contentLength)
        for offset in [-1, length + 1, .max] {
            let error = #expect(throws: MultipartError.self) { _ = try body.makeReader(startingAt: offset) }
            #expect(error?.code == .cannotResume, "\(offset)")
        }
        var end = try body.makeReader(startingAt: length)
        #expect(try end.readAll().isEmpty && end.isFinished)
        let empty = MultipartBody()
        let closeOnly = try empty.bytes()
        for offset in 0...closeOnly.count {
            #expect(try read(empty, from: Int64(offset), bufferSize: 10) == Array(closeOnly[offset...]))
        }
    }

    /// A file that changed since it was appended fails from an offset as it fails a whole read.
    @Test func aFileThatShrankFailsAsAWholeReadDoes() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("f.bin", contents: [UInt8](repeating: 1, count: 10_000))
        var body = MultipartBody()
        try body.append(.file(at: file, name: "f"))
        try Data(count: 10).write(to: file)
        let error = #expect(throws: MultipartError.self) { _ = try body.makeReader(startingAt: 5_000) }
        #expect(error?.code == .lengthMismatch)
        #expect(error?.partIndex == 0)
    }

    /// Placing a reader is linear in what it passes: a body of 1, 16 and 64 MB of tiny parts (the walk over the
    /// parts' heads) and of one stream part without a seek (its bytes read and dropped), each read from 1 KB before
    /// its end. Thread CPU time, so a loaded machine does not change the ratio much.
    @Test(.timeLimit(.minutes(10)), arguments: ["tiny parts", "a stream skipped"])
    func placingAReaderGrowsLinearly(shape: String) async throws {
        @Sendable func body(megabytes: Int) throws -> MultipartBody {
            var body = MultipartBody()
            if shape == "tiny parts" {
                for index in 0..<(megabytes << 20) / 64 { try body.append(.text("v", name: "f\(index % 10)")) }
            } else {
                // Bytes made as they are read, not a `Data` in memory: reading 512 MB of memory measured the
                // machine's memory (faults, huge pages, cache), not the skip, up to 8.9 times 128 MB in CI.
                let length = megabytes << 20
                try body.append(.stream(name: "s", length: length) { RepeatingStream(length: length) })
            }
            return body
        }
        /// The CPU time of placing a reader 1 KB before the end, and the bytes it then read.
        @Sendable func place(_ megabytes: Int) throws -> (time: Duration, read: Int) {
            let body = try body(megabytes: megabytes)
            let offset = (body.contentLength ?? 0) - 1024
            let (rest, time) = try measureThreadCPUTime {
                var reader = try body.makeReader(startingAt: offset)
                return try reader.readAll()
            }
            return (time, rest.count)
        }
        // A stream is skipped at the speed of a copy within the cache, a few milliseconds at 16 MB: its sizes are
        // larger so that the time is the skip's, not the scheduler's; the tiny parts are slow enough at 16 and 64 MB.
        let (medium, large) = shape == "tiny parts" ? (16, 64) : (128, 512)
        // Minutes of synchronous work in a debug build: on a thread of its own, not the cooperative pool's; the
        // checks stay on the test's task.
        let (small, growth) = try await onThreadOfItsOwn {
            (
                try place(1),
                try linearGrowthRatio(
                    limit: 8, medium: { try place(medium).time }, large: { try place(large).time })
            )
        }
        #expect(small.read == 1024)
        print("BodyFromOffsetTests: \(shape): CPU time \(small.time), \(growth.medium), \(growth.large)")
        #expect(growth.ratio < 8, "\(shape): \(large) MB took \(growth.ratio)× the CPU time of \(medium) MB")
    }
}

/// A stream of `length` bytes of `a`, made as they are read: a long stream part that takes no memory, so that
/// reading it costs the reader's work alone.
private final class RepeatingStream: InputStream {
    private var left: Int
    private var status: Stream.Status = .notOpen

    init(length: Int) {
        left = length
        super.init(data: Data())
    }

    override var streamStatus: Stream.Status { status }
    override var hasBytesAvailable: Bool { left > 0 }
    override func open() { status = .open }
    override func close() { status = .closed }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        let count = min(length, left)
        buffer.update(repeating: 0x61, count: count)
        left -= count
        if left == 0 { status = .atEnd }
        return count
    }
}
