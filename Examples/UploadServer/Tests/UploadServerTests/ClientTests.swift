import AsyncHTTPClient
import ExampleTestSupport
import Foundation
import StreamingMultipart
import StreamingMultipartCrypto
import StreamingMultipartNIO
import StreamingMultipartURLSession
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Real clients against the running server on 127.0.0.1: every file it reports matches what was sent, by SHA-256,
/// and its spool folder is empty afterwards.
@Suite(.enabled(if: RunningServer.binary != nil, "the UploadServer binary was not built"), .timeLimit(.minutes(5)))
struct ClientTests {
    /// File names that need escaping in a header, each with its own bytes.
    static let trickyNames = [
        "quote\"d.txt", "semi;colon.txt", "back\\slash.txt", "with space.txt", "naïve 日本.txt", "50% off.txt",
    ]

    /// `curl -F 'photos=@a,b'` nests the two files in one multipart/mixed part (RFC 7578 §4.3 deprecates it): the
    /// spooler reads them as two files of the field, past maxFieldBytes together.
    @Test(.enabled(if: onPath("curl") != nil, "needs curl"))
    func curlsListOfFilesArrivesAsFilesOfTheField() async throws {
        let server = try RunningServer()
        let outbox = try Outbox()
        defer {
            server.stop()
            outbox.remove()
        }
        let first = randomBytes(700_000, seed: 71)
        let second = randomBytes(700_000, seed: 72)
        let paths = [try outbox.file("a.jpg", first), try outbox.file("b.jpg", second)]
        let result = try await run(
            onPath("curl")!,
            ["-sS", "-F", "photos=@\(paths.joined(separator: ","))", "-F", "caption=Two", "\(server.url)/upload"])
        #expect(result.status == 0, "\(result.errors)")
        let answer = try JSONDecoder().decode(Answer.self, from: result.output)
        let files = try #require(answer.files, "\(result.text)")
        #expect(files.map(\.field) == ["photos", "photos"])
        #expect(files.map(\.filename) == ["a.jpg", "b.jpg"])
        #expect(files.map(\.sha256) == [sha256(first), sha256(second)])
        #expect(answer.fields?.map(\.value) == ["Two"])
        #expect(try server.spooledFiles() == [])
    }

    /// `--digest` picks each file's digest in the answer: CRC-32C (checked here against the CRC-32C of what was
    /// sent) or none; a digest the server does not know is refused at start, naming the ones it does.
    @Test(.enabled(if: onPath("curl") != nil, "needs curl"))
    func theAnswerCarriesTheDigestTheServerWasStartedWith() async throws {
        let outbox = try Outbox()
        defer { outbox.remove() }
        let content = randomBytes(3_000_000, seed: 73)
        let path = try outbox.file("a.bin", content)
        let whole = content[...]
        var crc = CRC32CDigest()
        crc.update(whole.span)
        let crcHex = crc.finalize().map { String(format: "%02x", $0) }.joined()
        for (digest, expected) in [("crc32c", crcHex), ("none", nil)] {
            let server = try RunningServer(arguments: ["--digest", digest])
            defer { server.stop() }
            let result = try await run(onPath("curl")!, ["-sS", "-F", "f=@\(path)", "\(server.url)/upload"])
            let file = try #require(try JSONDecoder().decode(Answer.self, from: result.output).files?.first)
            #expect(file.crc32c == expected && file.sha256 == nil && file.size == Int64(content.count), "\(digest)")
        }
        let refused = try await run(RunningServer.binary!, ["--digest", "md5"])
        #expect(refused.status != 0)
        #expect(refused.errors.contains("sha256") && refused.errors.contains("crc32c"), "\(refused.errors)")
    }

    @Test(.enabled(if: onPath("curl") != nil, "needs curl"))
    func curlSendsTrickyFilenames() async throws {
        let server = try RunningServer()
        let outbox = try Outbox()
        defer {
            server.stop()
            outbox.remove()
        }
        var arguments = ["-sS", "-F", "caption=Sunset over the bay"]
        var sent: [(String, [UInt8])] = []
        for (index, name) in Self.trickyNames.enumerated() {
            let bytes = randomBytes(10_000 + index * 3_000, seed: UInt64(index + 1))
            let path = try outbox.file("f\(index).bin", bytes)
            // curl's -F: inside double quotes, a backslash escapes `"` and `\`.
            let quoted = name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            arguments += ["-F", "file\(index)=@\(path);filename=\"\(quoted)\";type=application/octet-stream"]
            sent.append((name, bytes))
        }
        let result = try await run(onPath("curl")!, arguments + ["\(server.url)/upload"])
        #expect(result.status == 0, "\(result.errors)")
        let answer = try JSONDecoder().decode(Answer.self, from: result.output)
        #expect(answer.fields?.map(\.value) == ["Sunset over the bay"])
        let files = try #require(answer.files)
        #expect(files.map(\.filename) == sent.map(\.0))
        #expect(files.map(\.size) == sent.map { Int64($0.1.count) })
        #expect(files.map(\.sha256) == sent.map { sha256($0.1) })
        #expect(files.allSatisfy { $0.contentType == "application/octet-stream" })
        #expect(try server.spooledFiles() == [])
    }

    @Test(.enabled(if: onPath("curl") != nil, "needs curl"))
    func expectContinueIsAnsweredAtOnce() async throws {
        let server = try RunningServer()
        defer { server.stop() }
        let result = try await run(
            onPath("curl")!,
            [
                "-sS", "-v", "-H", "Expect: 100-continue", "-F", "a=1", "-w", "%{time_total}", "-o", "/dev/null",
                "\(server.url)/upload",
            ])
        #expect(result.status == 0)
        #expect(result.errors.contains("HTTP/1.1 100 Continue"), "\(result.errors)")
        // curl waits a whole second for a 100 that does not come.
        #expect(try #require(Double(result.text)) < 0.5, "took \(result.text) s")
    }

    @Test(.enabled(if: python(with: "requests") != nil, "needs python3 with requests"))
    func pythonRequestsUploads() async throws {
        let server = try RunningServer()
        defer { server.stop() }
        let script = """
            import hashlib, json, requests, sys
            names = json.loads(sys.argv[2])
            files = [("files", (name, bytes([i % 251 for i in range(1000 * (n + 1))]), "text/plain")) for n, name in enumerate(names)]
            response = requests.post(sys.argv[1], data={"caption": "café", "tags": ["a", "b"]}, files=files)
            answer = response.json()
            answer["expected"] = [hashlib.sha256(content).hexdigest() for _, (_, content, _) in files]
            print(json.dumps(answer))
            """
        let names = String(decoding: try JSONEncoder().encode(Self.trickyNames), as: UTF8.self)
        let result = try await run(python(with: "requests")!, ["-c", script, "\(server.url)/upload", names])
        #expect(result.status == 0, "\(result.errors)")
        struct Checked: Decodable {
            var fields: [Answer.Field]
            var files: [Answer.File]
            var expected: [String]
        }
        let answer = try JSONDecoder().decode(Checked.self, from: result.output)
        #expect(answer.fields.map(\.name) == ["caption", "tags", "tags"])
        #expect(answer.fields.map(\.value) == ["café", "a", "b"])
        #expect(answer.files.map(\.filename) == Self.trickyNames)
        #expect(answer.files.map(\.sha256) == answer.expected)
        #expect(try server.spooledFiles() == [])
    }

    @Test func asyncHTTPClientStreamsTheBuilderBodyWithItsLength() async throws {
        // This checks the body's framing, not the server's patience: under six busy loops, with the suite's other
        // tests starting at once, the client's body once came too slowly for the default deadlines (a 408 at 20 s).
        let server = try RunningServer(arguments: ["--header-timeout", "60", "--body-rate", "1", "--body-window", "60"])
        let outbox = try Outbox()
        defer {
            server.stop()
            outbox.remove()
        }
        let photo = randomBytes(3_000_000, seed: 9)
        var body = MultipartBody()
        try body.append(.text("Sunset", name: "caption"))
        try body.append(.file(at: URL(fileURLWithPath: try outbox.file("photo.jpg", photo)), name: "photo"))
        var request = HTTPClientRequest(url: "\(server.url)/upload")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: body.contentType)
        let buffers = body.byteBuffers()
        let length = try #require(buffers.contentLength)
        request.body = .stream(buffers, length: .known(length))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        #expect(response.status == .ok)
        let data = try await response.body.collect(upTo: 1 << 20)
        let answer = try JSONDecoder().decode(Answer.self, from: Data(data.readableBytesView))
        #expect(answer.files?.first?.filename == "photo.jpg")
        #expect(answer.files?.first?.contentType == "image/jpeg")
        #expect(answer.files?.first?.sha256 == sha256(photo))
        #expect(try server.spooledFiles() == [])
    }

    @Test func urlSessionUploadsABodyWrittenToAFile() async throws {
        let server = try RunningServer()
        let outbox = try Outbox()
        defer {
            server.stop()
            outbox.remove()
        }
        let log = randomBytes(500_000, seed: 5)
        var body = MultipartBody()
        try body.append(.text("notes", name: "caption"))
        try body.append(.data(Data(log), name: "log", filename: "back\\slash \"q\".log"))
        var request = URLRequest(url: URL(string: "\(server.url)/upload")!)
        request.httpMethod = "POST"
        let file = outbox.url.appendingPathComponent("body.bin")
        let length = try request.setMultipartBody(body, writingTo: file)
        #expect(request.value(forHTTPHeaderField: "Content-Length") == String(length))
        let (data, response) = try await URLSession.shared.upload(for: request, fromFile: file)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let answer = try JSONDecoder().decode(Answer.self, from: data)
        #expect(answer.files?.first?.filename == "back\\slash \"q\".log")
        #expect(answer.files?.first?.sha256 == sha256(log))
        #expect(try server.spooledFiles() == [])
    }

    @Test(.enabled(if: onPath("curl") != nil, "needs curl"))
    func compressedBodiesAreRead() async throws {
        let server = try RunningServer()
        let outbox = try Outbox()
        defer {
            server.stop()
            outbox.remove()
        }
        let content = Array(String(repeating: "compressible text ", count: 20_000).utf8)
        var body = MultipartBody()
        try body.append(.data(Data(content), name: "doc", filename: "doc.txt"))
        for encoding in ["gzip", "deflate"] {
            let path = outbox.url.appendingPathComponent("body.\(encoding)")
            try body.write(to: path, compression: encoding == "gzip" ? .gzip : .deflate)
            let result = try await run(
                onPath("curl")!,
                [
                    "-sS", "-H", "Content-Type: \(body.contentType)", "-H", "Content-Encoding: \(encoding)",
                    "--data-binary", "@\(path.path)", "\(server.url)/upload",
                ])
            let answer = try JSONDecoder().decode(Answer.self, from: result.output)
            #expect(answer.files?.first?.sha256 == sha256(content), "\(encoding): \(result.text)")
        }
        #expect(try server.spooledFiles() == [])
    }

    /// Sends `body` with curl and returns the HTTP status and the decoded answer.
    func post(_ server: RunningServer, _ headers: [String], body path: String) async throws -> (Int, Answer) {
        let result = try await run(
            onPath("curl")!,
            ["-sS", "-o", "-", "-w", "\n%{http_code}"] + headers.flatMap { ["-H", $0] }
                + ["--data-binary", "@\(path)", "\(server.url)/upload"])
        let lines = result.text.split(separator: "\n", omittingEmptySubsequences: false)
        let status = Int(lines.last ?? "") ?? 0
        let answer = try JSONDecoder().decode(Answer.self, from: Data(lines.dropLast().joined(separator: "\n").utf8))
        return (status, answer)
    }

    @Test(.enabled(if: onPath("curl") != nil, "needs curl"))
    func refusalsAreJSONWithTheirStatus() async throws {
        let server = try RunningServer(arguments: ["--max-file-bytes", "1000"])
        let outbox = try Outbox()
        defer {
            server.stop()
            outbox.remove()
        }
        var body = MultipartBody()
        try body.append(.text("a", name: "a"))
        try body.append(.data(Data(randomBytes(5000, seed: 3)), name: "big", filename: "big.bin"))
        let path = outbox.url.appendingPathComponent("body.bin")
        try body.write(to: path)
        let type = "Content-Type: \(body.contentType)"

        let (tooLarge, limit) = try await post(server, [type], body: path.path)
        #expect(tooLarge == 413)
        #expect(limit.error?.code == "limitExceeded")
        #expect(limit.error?.message.contains("maxFileBytes") == true)
        #expect(limit.error?.offset != nil)

        let (encoding, unsupported) = try await post(server, [type, "Content-Encoding: br"], body: path.path)
        #expect(encoding == 415)
        #expect(unsupported.error?.code == "unsupportedContentEncoding")

        let (media, notMultipart) = try await post(server, ["Content-Type: text/plain"], body: path.path)
        #expect(media == 415)
        #expect(notMultipart.error?.code == "invalidContentType")

        let truncated = try outbox.file("cut.bin", Array(try Data(contentsOf: path).prefix(300)))
        let (malformed, cut) = try await post(server, [type], body: truncated)
        #expect(malformed == 400)
        #expect(cut.error?.code == "truncated")
        #expect(try server.spooledFiles() == [])
    }

    @Test func theFormPageIsServed() async throws {
        let server = try RunningServer()
        defer { server.stop() }
        let (data, response) = try await URLSession.shared.data(from: URL(string: "\(server.url)/")!)
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type") == "text/html; charset=utf-8")
        let page = String(decoding: data, as: UTF8.self)
        #expect(page.contains("enctype=\"multipart/form-data\"") && page.contains("type=\"file\" multiple"))
    }
}

/// A server built on the core, StreamingMultipartNIO and StreamingMultipartServer links no URLSession machinery.
@Suite(.timeLimit(.minutes(5))) struct LinkageTests {
    @Test(.enabled(if: RunningServer.binary != nil && onPath("ldd") != nil, "needs the built server and ldd (Linux)"))
    func theServerLinksNeitherFoundationNetworkingNorLibcurl() async throws {
        let result = try await run(onPath("ldd")!, [RunningServer.binary!])
        #expect(result.status == 0)
        #expect(result.text.contains("libFoundationEssentials"))  // ldd did list the server's libraries
        #expect(!result.text.contains("FoundationNetworking"), "\(result.text)")
        #expect(!result.text.contains("libcurl"), "\(result.text)")
    }
}
