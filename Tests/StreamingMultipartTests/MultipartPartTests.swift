import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

@Suite struct MultipartPartTests {
    @Test func fileInfersFilenameTypeAndLengthAtAppend() throws {
        let part = try MultipartPart.file(at: Repository.input("notes.txt"), name: "n")
        #expect(part.headers[.contentDisposition] == #"form-data; name="n"; filename="notes.txt""#)
        #expect(part.headers[.contentType] == "text/plain")
        #expect(part.content.length == Int64(try Data(contentsOf: Repository.input("notes.txt")).count))
    }

    @Test(arguments: [
        ("a.JPG", "image/jpeg"), ("b.png", "image/png"), ("c.json", "application/json"),
        ("d.pdf", "application/pdf"), ("e.unknownext", "application/octet-stream"),
        ("noext", "application/octet-stream"),
        (".hidden", "application/octet-stream"), ("f.tar.gz", "application/gzip"), ("g.mp4", "video/mp4"),
    ])
    func infersContentTypes(_ filename: String, _ type: String) {
        #expect(MultipartPart.contentType(forFilename: filename) == type)
    }

    @Test func missingFileFailsAtAppend() {
        let error = #expect(throws: MultipartError.self) {
            try MultipartPart.file(at: URL(fileURLWithPath: "/nonexistent/photo.jpg"), name: "p")
        }
        #expect(error?.code == .fileNotFound)
        #expect(error?.message.contains("/nonexistent/photo.jpg") == true)
        #expect(error?.cause != nil)
    }

    @Test func directoryFailsAtAppend() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let error = #expect(throws: MultipartError.self) { try MultipartPart.file(at: folder.url, name: "d") }
        #expect(error?.code == .notARegularFile)
        #expect(error?.message.contains("directory") == true)
    }

    @Test func unreadableFileFailsAtAppend() throws {
        guard getuid() != 0 else {
            // root reads any file whatever its mode; a device that refuses reads stands in for it.
            let error = #expect(throws: MultipartError.self) {
                try MultipartPart.file(at: URL(fileURLWithPath: "/dev/null"), name: "d")
            }
            #expect(error?.code == .notARegularFile)
            return
        }
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("secret.txt", contents: Array("x".utf8))
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: file.path)
        let error = #expect(throws: MultipartError.self) { try MultipartPart.file(at: file, name: "s") }
        #expect(error?.code == .fileUnreadable)
    }

    @Test(.enabled(if: canListOpenFiles, "lists open files through /proc/self/fd (Linux only)"))
    func appendDoesNotOpenTheFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("lazy.bin", contents: [1, 2, 3])
        var body = MultipartBody()
        try body.append(.file(at: file, name: "lazy"))
        #expect(!processHasOpen(file.path))
    }
}
