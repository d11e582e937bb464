import ExampleTestSupport
import Foundation
import StreamingMultipart
import Testing

/// The streaming route against real clients: curl, Python's requests, a headless browser submitting the page's
/// form, a client that disconnects mid-body, and a form past the limits. Every test ends with the spool empty.
@Suite(.serialized) struct UploadRouteTests {
    /// Two photos, the second past the socket buffers, with their digests.
    static func photos(_ outbox: Outbox) throws -> (paths: [String], answer: [Answer.Photo]) {
        let small = randomBytes(70_000, seed: 1)
        let large = randomBytes(3 << 20, seed: 2)
        let paths = [try outbox.file("small.jpg", small), try outbox.file("large.jpg", large)]
        return (
            paths,
            [
                .init(filename: "small.jpg", size: Int64(small.count), sha256: sha256(small)),
                .init(filename: "large.jpg", size: Int64(large.count), sha256: sha256(large)),
            ]
        )
    }

    @Test(.enabled(if: onPath("curl") != nil, "needs curl"), arguments: ["/upload", "/kit/upload"])
    func curlUploadsTwoPhotos(route: String) async throws {
        let outbox = try Outbox()
        defer { outbox.remove() }
        let (paths, expected) = try Self.photos(outbox)
        try await RunningApp.with { app in
            let result = try await run(
                onPath("curl")!,
                [
                    "-sS", "-F", "caption=Sunset", "-F", "photos[]=@\(paths[0])", "-F", "photos[]=@\(paths[1])",
                    app.url + route,
                ])
            #expect(result.status == 0, "\(result.errors)")
            let answer = try JSONDecoder().decode(Answer.self, from: result.output)
            #expect(answer.caption == "Sunset")
            #expect(answer.photos == expected, "\(result.text)")
            #expect(try app.spooledFiles() == [])
        }
    }

    /// A repeated name without brackets reads as a list on the streaming route too.
    @Test(.enabled(if: python(with: "requests") != nil, "needs python3 with requests"))
    func pythonRequestsUploadsWithARepeatedName() async throws {
        let outbox = try Outbox()
        defer { outbox.remove() }
        let (paths, expected) = try Self.photos(outbox)
        let script = """
            import sys, requests
            files = [("photos", (p.rsplit("/", 1)[1], open(p, "rb"), "image/jpeg")) for p in sys.argv[2:]]
            r = requests.post(sys.argv[1], data={"caption": "From requests"}, files=files)
            sys.stdout.write(r.text)
            """
        try await RunningApp.with { app in
            let result = try await run(
                python(with: "requests")!, ["-c", script, app.url + "/upload"] + paths)
            #expect(result.status == 0, "\(result.errors)")
            let answer = try JSONDecoder().decode(Answer.self, from: result.output)
            #expect(answer.caption == "From requests")
            #expect(answer.photos == expected, "\(result.text)")
            #expect(try app.spooledFiles() == [])
        }
    }

    static let browserScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/browser_submit.py").path

    @Test(
        .enabled(
            if: onPath("chromium") != nil && python(with: "websocket") != nil,
            "needs chromium and python3 with websocket-client"))
    func aHeadlessBrowserSubmitsThePagesForm() async throws {
        try await RunningApp.with { app in
            let result = try await run(python(with: "websocket")!, [Self.browserScript, "chromium", app.url + "/"])
            #expect(result.status == 0, "\(result.errors)")
            struct Page: Decodable {
                var status: Int
                var answer: Answer
            }
            let page = try JSONDecoder().decode(Page.self, from: result.output)
            let text = Array(String(repeating: "hello from a browser\n", count: 100).utf8)
            let binary = (0..<300_000).map { UInt8(($0 * 7) % 256) }
            #expect(page.status == 200)
            #expect(page.answer.caption == "from a browser")
            #expect(
                page.answer.photos == [
                    .init(filename: "say \"cheese\".txt", size: Int64(text.count), sha256: sha256(text)),
                    .init(filename: "photo.bin", size: Int64(binary.count), sha256: sha256(binary)),
                ])
            #expect(try app.spooledFiles() == [])
        }
    }

    /// A client that sends half its body and goes away: the file being spooled is removed.
    @Test(.enabled(if: onPath("python3") != nil, "needs python3"))
    func aClientThatDisconnectsMidBodyLeavesNothing() async throws {
        let script = """
            import socket, sys, time
            port = int(sys.argv[1])
            boundary = "cut-short"
            head = ("--%s\\r\\nContent-Disposition: form-data; name=\\"photos[]\\"; filename=\\"big.jpg\\"\\r\\n\\r\\n"
                    % boundary).encode()
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(("POST /upload HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: multipart/form-data; boundary=%s\\r\\n"
                       "Content-Length: %d\\r\\n\\r\\n" % (boundary, 64 << 20)).encode() + head)
            for _ in range(32):
                s.sendall(b"x" * 65536)
            sys.stdout.write("sent\\n"); sys.stdout.flush()
            sys.stdin.readline()  # the test looks at the spool, then says go
            s.close()
            """
        try await RunningApp.with { app in
            let python = try #require(onPath("python3"))
            let process = Process()
            process.executableURL = URL(fileURLWithPath: python)
            process.arguments = ["-c", script, String(app.port)]
            let input = Pipe()
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            defer { process.terminate() }
            _ = try output.fileHandleForReading.read(upToCount: 5)
            #expect(try await app.eventually { try app.spooledFiles().count == 1 }, "the file is being spooled")
            try input.fileHandleForWriting.write(contentsOf: Data("go\n".utf8))
            process.waitUntilExit()
            let emptied = try await app.eventually { try app.spooledFiles().isEmpty }
            #expect(emptied, "left in the spool: \((try? app.spooledFiles()) ?? [])")
        }
    }

    /// A file past maxFileBytes: 413, as JSON, and nothing left.
    @Test(.enabled(if: onPath("curl") != nil, "needs curl"))
    func aFormPastTheLimitsIs413AsJSON() async throws {
        let outbox = try Outbox()
        defer { outbox.remove() }
        let path = try outbox.file("big.jpg", randomBytes(2 << 20, seed: 3))
        var limits = MultipartSpooler.Limits.default
        limits.parser.maxFileBytes = 1 << 20
        try await RunningApp.with(limits: limits) { app in
            let result = try await run(
                onPath("curl")!,
                [
                    "-sS", "-w", "\n%{http_code}", "-F", "caption=Too big", "-F", "photos[]=@\(path)",
                    app.url + "/upload",
                ])
            let lines = result.text.split(separator: "\n")
            #expect(lines.last == "413", "\(result.text) \(result.errors)")
            let answer = try JSONDecoder().decode(Answer.self, from: Data(lines.dropLast().joined().utf8))
            #expect(answer.error?.code == "limitExceeded")
            #expect(answer.error?.message.contains("maxFileBytes") == true, "\(answer.error?.message ?? "")")
            #expect(try await app.eventually { try app.spooledFiles().isEmpty })
        }
    }

    /// A form that is not an `Upload` (no caption): 422, naming what is missing.
    @Test(.enabled(if: onPath("curl") != nil, "needs curl"))
    func aFormThatIsNotAnUploadIs422() async throws {
        try await RunningApp.with { app in
            let result = try await run(
                onPath("curl")!, ["-sS", "-w", "\n%{http_code}", "-F", "title=x", app.url + "/upload"])
            let lines = result.text.split(separator: "\n")
            #expect(lines.last == "422", "\(result.text)")
            #expect(result.text.contains("caption"))
        }
    }
}
