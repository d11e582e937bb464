import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

@Suite struct WriteToFileTests {
    @Test func writesTheWholeBodyAndReturnsItsLength() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var body = MultipartBody()
        try body.append(.text("x", name: "x"))
        try body.append(.file(at: Repository.input("blob.bin"), name: "blob"))
        let target = folder.url.appendingPathComponent("upload.body")
        let length = try body.write(to: target)
        #expect(length == body.contentLength)
        #expect([UInt8](try Data(contentsOf: target)) == (try body.bytes()))
        #expect(try folder.contents() == ["upload.body"])
    }

    @Test func aFailedWriteLeavesNoFileAndKeepsTheOldOne() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let target = try folder.file("upload.body", contents: Array("previous".utf8))
        var body = MultipartBody()
        try body.append(.data(Data(repeating: 1, count: 300_000), name: "big", filename: "big.bin"))
        try body.append(.stream(name: "short", length: 3) { InputStream(data: Data([1, 2])) })
        let error = #expect(throws: MultipartError.self) { try body.write(to: target) }
        #expect(error?.code == .lengthMismatch)
        #expect(try folder.contents() == ["upload.body"])
        #expect(try String(contentsOf: target, encoding: .utf8) == "previous")
    }

    @Test func aFailedWriteToANewPathLeavesNothing() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let source = try folder.file("source.bin", contents: [1, 2, 3])
        var body = MultipartBody()
        try body.append(.file(at: source, name: "s"))
        try FileManager.default.removeItem(at: source)
        let error = #expect(throws: MultipartError.self) {
            try body.write(to: folder.url.appendingPathComponent("new.body"))
        }
        #expect(error?.code == .fileNotFound)
        #expect(try folder.contents().isEmpty)
    }

    @Test func anUnwritableFolderIsAWriteError() throws {
        let body = MultipartBody()
        let error = #expect(throws: MultipartError.self) {
            try body.write(to: URL(fileURLWithPath: "/nonexistent-folder/upload.body"))
        }
        #expect(error?.code == .writeFailed)
        #expect(error?.message.contains("/nonexistent-folder") == true)
    }

    /// The mode: the owner's alone by default; `permissions: 0o666` gives the usual mode under the umask.
    @Test func theFileModeIsTheOwnersByDefaultAndFollowsTheUmaskWhenAsked() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let body = MultipartBody()
        let mask = umask(0o022)
        defer { umask(mask) }
        let privateFile = folder.url.appendingPathComponent("private.body")
        let usualFile = folder.url.appendingPathComponent("usual.body")
        try body.write(to: privateFile)
        try body.write(to: usualFile, permissions: 0o666)
        let mode = { (url: URL) in
            (try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
        }
        #expect(try mode(privateFile) == 0o600)
        #expect(try mode(usualFile) == 0o644)
        #expect(try folder.contents().sorted() == ["private.body", "usual.body"])
    }

    /// A file's errno reaches the caller through the error's cause.
    @Test func theErrnoOfAFailedWriteIsReadable() throws {
        let error = #expect(throws: MultipartError.self) {
            try MultipartBody().write(to: URL(fileURLWithPath: "/nonexistent-folder/upload.body"))
        }
        let cause = try #require(error?.cause as? SystemCallError)
        #expect(cause.call == "open" && cause.errno == ENOENT)
    }
}
