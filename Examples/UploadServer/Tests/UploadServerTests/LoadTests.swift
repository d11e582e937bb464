import AsyncHTTPClient
import ExampleTestSupport
import Foundation
import StreamingMultipart
import StreamingMultipartNIO
import Testing

/// Many uploads at once while other clients drop their connections mid-body, and one 2 GiB upload: every completed
/// upload intact, no stray file in the spool folder, the server's memory bounded.
@Suite(
    .serialized, .enabled(if: RunningServer.binary != nil, "the UploadServer binary was not built"),
    .timeLimit(.minutes(5)))
struct LoadTests {
    /// A client that sends a request head announcing `length` bytes, `sent` bytes of a body, then closes.
    static let dropScript = """
        import socket, sys
        port, count, length, sent = (int(a) for a in sys.argv[1:5])
        boundary = "dropped"
        for _ in range(count):
            s = socket.create_connection(("127.0.0.1", port))
            head = ("POST /upload HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nContent-Type: multipart/form-data; boundary=" + boundary
                    + "\\r\\nContent-Length: " + str(length) + "\\r\\n\\r\\n")
            part = ("--" + boundary + "\\r\\nContent-Disposition: form-data; name=\\"f\\"; filename=\\"f.bin\\"\\r\\n\\r\\n")
            s.sendall(head.encode() + part.encode() + b"x" * sent)
            s.close()
        """

    @Test(.enabled(if: onPath("python3") != nil, "needs python3 for the clients that drop"))
    func fiftyUploadsWhileTenClientsDisconnect() async throws {
        let server = try RunningServer()
        let outbox = try Outbox()
        defer {
            server.stop()
            outbox.remove()
        }
        let size = 20 << 20
        let content = randomBytes(size, seed: 50)
        let expected = sha256(content)
        let file = URL(fileURLWithPath: try outbox.file("twenty.bin", content))
        var form = MultipartBody()
        try form.append(.text("load", name: "caption"))
        try form.append(.file(at: file, name: "file"))
        let body = form
        let port = server.port
        // Sixteen connections at a time (a shared client holds 8 per host). A request queued for one waits as long as
        // the connect timeout allows, 10 s by default: too short for a busy machine, so the wait is the request's 300 s.
        var configuration = HTTPClient.Configuration(timeout: .init(connect: .seconds(300)))
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 16)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let drops = Task.detached {
            try await run(onPath("python3")!, ["-c", Self.dropScript, "\(port)", "10", "\(size)", "\(1 << 20)"])
        }
        let answers: [(Int, String?)]
        do {
            answers = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        var request = HTTPClientRequest(url: "\(server.url)/upload")
                        request.method = .POST
                        request.headers.add(name: "Content-Type", value: body.contentType)
                        let buffers = body.byteBuffers()
                        request.body = .stream(buffers, length: .known(buffers.contentLength!))
                        let response = try await client.execute(request, timeout: .seconds(300))
                        let data = try await response.body.collect(upTo: 1 << 20)
                        let answer = try JSONDecoder().decode(Answer.self, from: Data(data.readableBytesView))
                        return (Int(response.status.code), answer.files?.first?.sha256)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            try await client.shutdown()
        } catch {
            try? await client.shutdown()
            throw error
        }
        let dropped = try await drops.value
        #expect(dropped.status == 0, "\(dropped.errors)")
        #expect(answers.count == 50)
        let wrong = answers.filter { $0.0 != 200 || $0.1 != expected }
        #expect(
            wrong.isEmpty, "\(wrong.count) uploads answered other than 200 with the file's digest: \(wrong.prefix(5))")
        // The dropped uploads' files go as their requests fail; give the server a moment to see the last closes.
        for _ in 0..<50 where try !server.spooledFiles().isEmpty { try await Task.sleep(for: .milliseconds(100)) }
        #expect(try server.spooledFiles() == [])
        let peak = try #require(server.peakResidentKiB())
        print("UploadServer peak RSS after 50 uploads of 20 MiB, 16 at a time, and 10 dropped: \(peak) KiB")
        #expect(peak < 256 * 1024)
    }

    @Test(
        .enabled(
            if: onPath("curl") != nil && FileManager.default.fileExists(atPath: "/proc/self/status"),
            "needs curl, and /proc for the server's memory"))
    func aTwoGiBUploadKeepsTheServerUnder64MiB() async throws {
        let server = try RunningServer()
        let outbox = try Outbox()
        defer {
            server.stop()
            outbox.remove()
        }
        // A sparse file: 2 GiB of zeros that take no disk to send.
        let path = outbox.url.appendingPathComponent("two.bin").path
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: 2 << 30)
        try handle.close()
        let result = try await run(onPath("curl")!, ["-sS", "-F", "file=@\(path)", "\(server.url)/upload"])
        let answer = try JSONDecoder().decode(Answer.self, from: result.output)
        #expect(answer.files?.first?.size == 2 << 30, "\(result.text) \(result.errors)")
        // `head -c 2147483648 /dev/zero | sha256sum`
        #expect(answer.files?.first?.sha256 == "a7c744c13cc101ed66c29f672f92455547889cc586ce6d44fe76ae824958ea51")
        let peak = try #require(server.peakResidentKiB())
        print("UploadServer peak RSS after a 2 GiB upload: \(peak) KiB")
        #expect(peak < 64 * 1024)
        #expect(try server.spooledFiles() == [])
    }
}
