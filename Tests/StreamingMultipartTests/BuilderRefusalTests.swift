import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// The builder refuses what its own parser refuses: a part that is no form-data part, and, with a boundary the
/// caller chose, a file or stream part whose bytes hold that boundary (a field smuggled in by the file's author).
@Suite struct BuilderRefusalTests {
    // MARK: File and stream parts that hold a chosen boundary

    /// A file whose bytes end one part and begin another: at the receiver, a field `role` = `admin`.
    static let smuggling = Array("report\r\n--B\r\nContent-Disposition: form-data; name=\"role\"\r\n\r\nadmin".utf8)

    static func smugglingBody(_ kind: String, bytes: [UInt8], in folder: TemporaryFolder) throws -> MultipartBody {
        var body = MultipartBody(boundary: try MultipartBoundary("B"))
        try body.append(.text("alice", name: "user"))
        switch kind {
        case "file":
            try body.append(.file(at: try folder.file("smuggle.txt", contents: bytes), name: "upload"))
        default:
            let data = Data(bytes)
            try body.append(
                .stream(name: "upload", filename: "smuggle.txt", length: kind == "stream" ? data.count : nil) {
                    InputStream(data: data)
                })
        }
        return body
    }

    @Test(arguments: ["file", "stream", "stream of unknown length"])
    func aFileOrStreamThatHoldsTheChosenBoundaryFailsTheRead(kind: String) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let body = try Self.smugglingBody(kind, bytes: Self.smuggling, in: folder)
        for bufferSize in [1, 7, 4096, 64 * 1024] {  // through the staging block and straight into the buffer
            let error = #expect(throws: MultipartError.self) { try body.bytes(bufferSize: bufferSize) }
            #expect(error?.code == .boundaryInContent)
            #expect(error?.partIndex == 1)
            #expect(error?.message.contains("part 2 (\"upload\")") == true, "\(error?.message ?? "")")
            #expect(error?.message.contains("at byte 8 of its content") == true, "\(error?.message ?? "")")
        }
        // Written to a file, nothing is left behind.
        let target = folder.url.appendingPathComponent("body.out")
        #expect(throws: MultipartError.self) { try body.write(to: target) }
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }

    @Test func aBoundaryAcrossTwoReadsIsFound() throws {
        // The boundary placed across the 64 KiB blocks a file is read in, at every offset around the seam, and
        // read through buffers of several sizes.
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        for shift in 0...4 {
            let filler = [UInt8](repeating: UInt8(ascii: "x"), count: 64 * 1024 - shift)
            let body = try Self.smugglingBody("file", bytes: filler + Array("--B".utf8) + filler, in: folder)
            for bufferSize in [3, 1000, 64 * 1024] {
                let error = #expect(throws: MultipartError.self) { try body.bytes(bufferSize: bufferSize) }
                #expect(error?.message.contains("at byte \(filler.count) of its content") == true)
            }
        }
    }

    @Test func aFileWithoutTheBoundaryIsSentWhole() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        // Near misses: the boundary cut short, and "--B" split by the read seams, never whole.
        let bytes = Array(String(repeating: "--A-B -\r\n--\r\n-", count: 20_000).utf8)
        let body = try Self.smugglingBody("file", bytes: bytes, in: folder)
        for bufferSize in [1, 4096, 64 * 1024] {
            let sent = try body.bytes(bufferSize: bufferSize)
            #expect(sent.count == Int(try #require(body.contentLength)))
            #expect(sent.count > bytes.count)
        }
    }

    @Test func aRandomBoundaryIsNotScannedFor() throws {
        // The default boundary's 190 random bits are never in a file by chance; the file's own "--B" is data.
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var body = MultipartBody()
        try body.append(.file(at: try folder.file("smuggle.txt", contents: Self.smuggling), name: "upload"))
        var parser = try MultipartParser(contentType: body.contentType)
        try parser.append(try body.bytes())
        var names: [String] = []
        while let event = try parser.next() { if case .partHeaders(let head) = event { names.append(head.name) } }
        #expect(names == ["upload"])
    }

    // MARK: Parts that are not form-data parts

    static let refusals: [(String, MultipartHeaders, MultipartError.Code)] = {
        let many = (0..<17).map { "; p\($0)=v" }.joined()
        var tooMany = MultipartHeaders([.init(name: .contentDisposition, value: "form-data; name=\"a\"")])
        for index in 0..<32 { tooMany.append(MultipartHeaders.Name("X-\(index)"), "v") }
        return [
            ("no Content-Disposition", [.contentType: "text/plain"], .missingContentDisposition),
            (
                "two Content-Dispositions",
                MultipartHeaders([
                    .init(name: .contentDisposition, value: "form-data; name=\"a\""),
                    .init(name: .contentDisposition, value: "form-data; name=\"b\""),
                ]), .duplicateHeader
            ),
            (
                "two Content-Types",
                MultipartHeaders([
                    .init(name: .contentDisposition, value: "form-data; name=\"a\""),
                    .init(name: .contentType, value: "text/plain"), .init(name: .contentType, value: "text/html"),
                ]), .duplicateHeader
            ),
            ("no name", [.contentDisposition: "form-data; filename=\"a.txt\""], .missingName),
            ("another type", [.contentDisposition: "attachment; name=\"a\""], .invalidHeader),
            ("a parameter twice", [.contentDisposition: "form-data; name=\"a\"; name=\"b\""], .invalidHeader),
            ("an open quote", [.contentDisposition: "form-data; name=\"a"], .invalidHeader),
            ("17 parameters", [.contentDisposition: "form-data; name=\"a\"" + many], .limitExceeded),
            ("33 headers", tooMany, .limitExceeded),
        ]
    }()

    @Test func aPartThatIsNoFormDataPartIsRefusedAtAppendAsTheParserRefusesIt() throws {
        for (what, headers, code) in Self.refusals {
            var body = MultipartBody(boundary: try MultipartBoundary("B"))
            let error = #expect(throws: MultipartError.self, "\(what)") {
                try body.append(MultipartPart(headers: headers, content: .text("x")))
            }
            #expect(error?.code == code, "\(what): \(error?.message ?? "")")
            #expect(error?.partIndex == 0, "\(what)")
            #expect(body.parts.isEmpty)
            // The strict parser refuses the same part, with the same code.
            let sent =
                crlf("--B\r\n") + headers.map { Array("\($0.name.rawName): \($0.value)\r\n".utf8) }.joined()
                + crlf("\r\nx\r\n--B--\r\n")
            #expect(parseEveryChunking(sent, boundary: "B").error == code, "\(what)")
        }
        // A part with its own headers that the parser reads is appended.
        var body = MultipartBody(boundary: try MultipartBoundary("B"))
        try body.append(
            MultipartPart(
                headers: [
                    .contentDisposition: "form-data; name=\"report\"; filename=\"r.csv\"", .contentType: "text/csv",
                ],
                content: .text("a,b")))
        #expect(body.parts.count == 1)
    }
}
