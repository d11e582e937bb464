import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

@Suite struct BodyReaderTests {
    func readError(_ body: MultipartBody, bufferSize: Int = 64 * 1024) -> MultipartError? {
        #expect(throws: MultipartError.self) { try body.bytes(bufferSize: bufferSize) }
    }

    @Test func fileDeletedBetweenAppendAndRead() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("gone.bin", contents: [1, 2, 3])
        var body = MultipartBody()
        try body.append(.text("a", name: "a"))
        try body.append(.file(at: file, name: "gone"))
        try FileManager.default.removeItem(at: file)
        let error = readError(body)
        #expect(error?.code == .fileNotFound)
        #expect(error?.partIndex == 1)
        #expect(error?.message.contains("gone.bin") == true)
        #expect((error?.offset ?? 0) > 0)
    }

    @Test(arguments: [2, 200_000])
    func fileShrunkBetweenAppendAndRead(newSize: Int) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("resized.bin", contents: [UInt8](repeating: 7, count: 100_000))
        var body = MultipartBody()
        try body.append(.file(at: file, name: "r"))
        try Data([UInt8](repeating: 8, count: newSize)).write(to: file)
        let error = readError(body)
        #expect(error?.code == .lengthMismatch)
        #expect(error?.message.contains("100000") == true)
        #expect(error?.message.contains("\(newSize)") == true)
    }

    @Test(.timeLimit(.minutes(5)))
    func aFileSwappedForAFIFOIsAnErrorNotAHang() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("swapped.bin", contents: [1, 2, 3])
        var body = MultipartBody()
        try body.append(.file(at: file, name: "f"))
        try FileManager.default.removeItem(at: file)
        #expect(mkfifo(file.path, 0o600) == 0)
        let error = readError(body)
        #expect(error?.code == .notARegularFile)
        #expect(error?.message.contains("swapped.bin") == true)
    }

    @Test func aFileSwappedForASymlinkToAnotherFileIsAnError() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("photo.jpg", contents: [UInt8](repeating: 1, count: 100))
        let secret = try folder.file("secret.key", contents: [UInt8](repeating: 2, count: 100))
        var body = MultipartBody()
        try body.append(.file(at: file, name: "f"))
        try FileManager.default.removeItem(at: file)
        try FileManager.default.createSymbolicLink(at: file, withDestinationURL: secret)
        let error = readError(body)
        #expect(error?.code == .fileReplaced)
        #expect(error?.message.contains("photo.jpg") == true)
    }

    @Test func aSymlinkAppendedAsSuchIsFollowed() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let target = try folder.file("target.txt", contents: Array("hello".utf8))
        let link = folder.url.appendingPathComponent("link.txt")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        var body = MultipartBody(boundary: try MultipartBoundary("xyz"))
        try body.append(.file(at: link, name: "f"))
        #expect(String(decoding: try body.bytes(), as: UTF8.self).contains("\r\n\r\nhello\r\n--xyz--"))
    }

    /// Reads a file part partly, truncates the file, and returns the error of reading on.
    func readTruncatedFile(in folder: TemporaryFolder) throws -> (URL, MultipartError?) {
        let file = try folder.file("shrinking.bin", contents: [UInt8](repeating: 7, count: 300_000))
        var body = MultipartBody()
        try body.append(.file(at: file, name: "r"))
        var reader = body.makeReader()
        var buffer = [UInt8](repeating: 0, count: 100_000)
        _ = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: 150_000)
        try handle.close()
        let error = #expect(throws: MultipartError.self) { try reader.readAll() }
        return (file, error)
    }

    @Test func fileTruncatedWhileBeingRead() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (_, error) = try readTruncatedFile(in: folder)
        #expect(error?.code == .lengthMismatch)
        #expect(error?.message.contains("of the 300000 bytes") == true)
    }

    @Test(.enabled(if: canListOpenFiles, "lists open files through /proc/self/fd (Linux only)"))
    func aTruncatedFileIsClosedAfterTheError() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (file, _) = try readTruncatedFile(in: folder)
        #expect(!processHasOpen(file.path))
    }

    @Test func fileGrowingWhileBeingReadIsAnError() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("growing.bin", contents: [UInt8](repeating: 7, count: 100_000))
        var body = MultipartBody()
        try body.append(.file(at: file, name: "g"))
        var reader = body.makeReader()
        var buffer = [UInt8](repeating: 0, count: 50_000)
        _ = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([1, 2, 3]))
        try handle.close()
        let error = #expect(throws: MultipartError.self) { try reader.readAll() }
        #expect(error?.code == .lengthMismatch)
        #expect(error?.message.contains("100003") == true)
    }

    @Test func streamShorterThanDeclared() {
        var body = MultipartBody()
        try? body.append(.stream(name: "short", length: 5) { InputStream(data: Data([1, 2, 3])) })
        let error = readError(body)
        #expect(error?.code == .lengthMismatch)
        #expect(error?.message.contains("3 of the 5") == true)
        #expect(error?.partIndex == 0)
    }

    @Test(arguments: [1, 64 * 1024])
    func streamLongerThanDeclared(bufferSize: Int) {
        var body = MultipartBody()
        try? body.append(.stream(name: "long", length: 3) { InputStream(data: Data([1, 2, 3, 4])) })
        let error = readError(body, bufferSize: bufferSize)
        #expect(error?.code == .lengthMismatch)
        #expect(error?.message.contains("more than the 3 bytes") == true)
    }

    @Test func streamThatFailsToOpen() {
        var body = MultipartBody()
        try? body.append(.stream(name: "bad") { InputStream(fileAtPath: "/nonexistent/x")! })
        let error = readError(body)
        #expect(error?.code == .streamFailed)
    }

    @Test func streamFactoryThatThrows() {
        struct Refused: Error {}
        var body = MultipartBody()
        try? body.append(.stream(name: "bad", length: 1) { throw Refused() })
        let error = readError(body)
        #expect(error?.code == .streamFailed)
        #expect(error?.cause is Refused)
    }

    @Test func readyMadeStreamMakesTheBodyOneShot() throws {
        var body = MultipartBody()
        try body.append(.stream(InputStream(data: Data("once".utf8)), name: "once", length: 4))
        let first = try body.bytes()
        #expect(String(decoding: first, as: UTF8.self).contains("\r\n\r\nonce\r\n"))
        let error = readError(body)
        #expect(error?.code == .streamAlreadyConsumed)
        #expect(error?.partIndex == 0)
    }

    @Test func factoryStreamsCanBeReadAgain() throws {
        var body = MultipartBody()
        try body.append(.stream(name: "s", length: 5) { InputStream(data: Data("again".utf8)) })
        #expect(try body.bytes() == body.bytes())
    }

    @Test func everyReadAfterAFailureThrowsTheSameError() throws {
        var body = MultipartBody()
        try body.append(.stream(name: "s", length: 2) { InputStream(data: Data([1])) })
        var reader = body.makeReader()
        let first = #expect(throws: MultipartError.self) { try reader.readAll() }
        let second = #expect(throws: MultipartError.self) { try reader.readAll() }
        #expect(first?.code == second?.code)
        #expect(first?.message == second?.message)
    }

    @Test(.enabled(if: canListOpenFiles, "lists open files through /proc/self/fd (Linux only)"))
    func closeReleasesTheFileAndFailsLaterReads() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("open.bin", contents: [UInt8](repeating: 1, count: 200_000))
        var body = MultipartBody()
        try body.append(.file(at: file, name: "f"))
        var reader = body.makeReader()
        var buffer = [UInt8](repeating: 0, count: 1000)
        _ = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
        #expect(processHasOpen(file.path))
        reader.close()
        #expect(!processHasOpen(file.path))
        let error = #expect(throws: MultipartError.self) { try reader.readAll() }
        #expect(error?.code == .cancelled)
    }

    @Test(.enabled(if: canListOpenFiles, "lists open files through /proc/self/fd (Linux only)"))
    func droppingAReaderClosesItsFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("dropped.bin", contents: [UInt8](repeating: 1, count: 200_000))
        var body = MultipartBody()
        try body.append(.file(at: file, name: "f"))
        do {
            var reader = body.makeReader()
            var buffer = [UInt8](repeating: 0, count: 1000)
            _ = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
            #expect(processHasOpen(file.path))
        }
        #expect(!processHasOpen(file.path))
    }

    @Test(.enabled(if: canListOpenFiles, "lists open files through /proc/self/fd (Linux only)"))
    func filesAreClosedOnceRead() throws {
        // A file of its own: other tests, running at the same time, read the shared fixtures.
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("read-once.bin", contents: [UInt8](repeating: 3, count: 200_000))
        var body = MultipartBody()
        try body.append(.file(at: file, name: "f"))
        try body.append(.text("after", name: "t"))
        var reader = body.makeReader()
        _ = try reader.readAll()
        #expect(!processHasOpen(file.path))
    }

    @Test func progressFollowsPartsAndBytes() throws {
        var body = MultipartBody()
        try body.append(.text("aaaa", name: "a"))
        try body.append(.data(Data(repeating: 1, count: 1000), name: "b", filename: "b.bin"))
        var reader = body.makeReader()
        #expect(reader.progress.partIndex == 0)
        #expect(reader.progress.completedBytes == 0)
        var seenParts: [Int?] = []
        var buffer = [UInt8](repeating: 0, count: 50)
        while try buffer.withUnsafeMutableBytes({ try reader.read(into: $0) }) > 0 {
            if seenParts.last != reader.progress.partIndex { seenParts.append(reader.progress.partIndex) }
        }
        #expect(seenParts == [0, 1, nil])
        #expect(reader.progress.completedBytes == body.contentLength)
        #expect(reader.progress.fractionCompleted == 1)
    }
}
