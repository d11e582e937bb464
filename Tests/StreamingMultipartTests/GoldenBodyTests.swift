import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// Each kind of part, built here and compared byte for byte with `Fixtures/golden/`, which `make_golden.py`
/// writes from the RFCs independently of this code.
@Suite struct GoldenBodyTests {
    let boundary = try! MultipartBoundary("golden-boundary-1234")
    let notes = Repository.input("notes.txt")
    let blob = Repository.input("blob.bin")

    func expectGolden(_ name: String, _ body: MultipartBody) throws {
        let golden = try Repository.golden(name)
        let produced = try body.bytes()
        #expect(produced == golden, "\(name): built \(produced.count) bytes, golden has \(golden.count)")
        #expect(body.contentLength.map { Int($0) } ?? produced.count == produced.count)
        for size in [1, 7, 4096] { #expect(try body.bytes(bufferSize: size) == golden, "\(name), reads of \(size)") }
    }

    @Test func textFields() throws {
        var body = MultipartBody(boundary: boundary)
        try body.append(.text("Sunset over the bay", name: "caption"))
        try body.append(.text("héllo ✓", name: "greeting"))
        try body.append(.text("value", name: "we\"ird\r\nname"))
        try body.append(.text("", name: "empty"))
        try expectGolden("text", body)
    }

    @Test func inMemoryData() throws {
        let blobBytes = try Data(contentsOf: blob)
        var body = MultipartBody(boundary: boundary)
        try body.append(.data(blobBytes.prefix(100), name: "thumb", filename: "thumb.jpg"))
        try body.append(
            .data(
                Data([0, 1, 2, 13, 10, 45, 45]), name: "doc", filename: "my \"best\".bin",
                contentType: "application/x-custom"))
        try body.append(.data(Data("raw bytes".utf8), name: "raw"))
        try expectGolden("data", body)
    }

    @Test func files() throws {
        var body = MultipartBody(boundary: boundary)
        try body.append(.file(at: notes, name: "notes"))
        try body.append(.file(at: blob, name: "blob"))
        try body.append(.file(at: notes, name: "renamed", filename: "other.csv"))
        try expectGolden("file", body)
    }

    @Test func streams() throws {
        let notesURL = notes
        let blobURL = blob
        let notesSize = try Data(contentsOf: notes).count
        var body = MultipartBody(boundary: boundary)
        try body.append(.stream(name: "log", filename: "log.txt", length: notesSize) { InputStream(url: notesURL)! })
        try body.append(.stream(name: "pipe") { InputStream(url: blobURL)! })
        #expect(body.contentLength == nil)
        try expectGolden("stream", body)
    }

    @Test func customHeaders() throws {
        var body = MultipartBody(boundary: boundary)
        let report: MultipartHeaders = [
            "Content-Disposition": #"form-data; name="report"; filename="r.csv""#,
            "Content-Type": "text/csv; charset=utf-8",
            "X-Checksum": "abc123",
        ]
        try body.append(MultipartPart(headers: report, content: .data(Data("a,b\r\n1,2\r\n".utf8))))
        let attached: MultipartHeaders = [
            "Content-Disposition": #"form-data; name="attached""#, "Content-Language": "en",
        ]
        try body.append(MultipartPart(headers: attached, content: .file(at: notes)))
        try expectGolden("headers", body)
    }

    @Test func parameters() throws {
        var body = MultipartBody(boundary: boundary)
        try body.append(parameters: [
            "user": ["name": "Ann", "address": ["city": "Oslo"]],
            "tags": ["swift", "http"],
            "count": 3,
            "flag": true,
        ])
        try expectGolden("parameters", body)
    }

    @Test func noParts() throws {
        try expectGolden("empty", MultipartBody(boundary: boundary))
    }
}
