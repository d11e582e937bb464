import AsyncHTTPClient
import ExampleTestSupport
import Foundation
import NIOCore
import StreamingMultipartAsyncHTTPClient
import StreamingMultipartURLSession
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The repository's Tests/Peers/front.py before the server: each new connection takes the next action (`proxy`,
/// `drop`, `redirect:CODE:LOCATION`, …), the last one repeating; it ends when this object stops.
final class Front: @unchecked Sendable {
    let process = Process()
    let input = Pipe()
    let output = Pipe()
    let port: Int

    convenience init(before server: RunningServer, actions: [String]) throws {
        try self.init(port: server.port, actions: actions)
    }

    /// A front before port `port` of 127.0.0.1 (nginx's, say).
    init(port target: Int, actions: [String]) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tests/Peers/front.py")
        process.executableURL = URL(fileURLWithPath: try #require(onPath("python3")))
        process.arguments = [script.path, String(target), actions.joined(separator: ",")]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let line = try firstLine(of: process, from: output, within: 120)
        port = try #require(Int(String(decoding: line, as: UTF8.self)), "front.py printed no port")
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// Stops the front and returns the bytes clients sent through it, on every connection it forwarded, and the
    /// connections it cut (a `cut:N` connection the client closed before N bytes is not cut).
    func stopCounting() -> (clientBytes: Int, cuts: Int)? {
        try? input.fileHandleForWriting.close()
        let rest = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let lines = rest.split(separator: "\n")
        func number(after prefix: String) -> Int? {
            lines.last { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) }
        }
        guard let clientBytes = number(after: "client bytes "), let cuts = number(after: "cuts ") else { return nil }
        return (clientBytes, cuts)
    }
}

/// The package's one-call uploads against the server, through a redirect and a dropped connection: every file the
/// server spooled has the SHA-256 of what was sent.
@Suite(
    .serialized, .enabled(if: RunningServer.binary != nil, "the UploadServer binary was not built"),
    .enabled(if: onPath("python3") != nil, "needs python3 for Tests/Peers/front.py"),
    .timeLimit(.minutes(5))
)
struct OneCallUploadTests {
    /// A caption and two files, the larger one past the socket buffers, with their digests.
    func makeForm(_ outbox: Outbox) throws -> (body: MultipartBody, digests: [String]) {
        let photo = randomBytes(3 << 20, seed: 41)
        let notes = randomBytes(70_000, seed: 42)
        var body = MultipartBody()
        try body.append(.text("Sunset over the bay", name: "caption"))
        try body.append(.file(at: URL(fileURLWithPath: try outbox.file("photo.bin", photo)), name: "photo"))
        try body.append(.file(at: URL(fileURLWithPath: try outbox.file("notes.txt", notes)), name: "notes"))
        return (body, [sha256(photo), sha256(notes)])
    }

    @Test func asyncHTTPClientFollowsA307ThenRetriesADroppedConnection() async throws {
        let server = try RunningServer()
        let front = try Front(before: server, actions: ["redirect:307:/upload", "drop", "proxy"])
        let outbox = try Outbox()
        defer {
            front.stop()
            server.stop()
            outbox.remove()
        }
        let (body, digests) = try makeForm(outbox)
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.connectionPool.retryConnectionEstablishment = false
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let events = Events()
        var options = HTTPClient.MultipartUploadOptions()
        options.retry = .init(attempts: 2, initialDelay: .milliseconds(50))
        options.onEvent = { events.add($0) }
        let answer: Answer
        do {
            let response = try await client.upload(body, to: "http://127.0.0.1:\(front.port)/start", options: options)
            #expect(response.status.code == 200)
            let data = try await response.body.collect(upTo: 1 << 20)
            answer = try JSONDecoder().decode(Answer.self, from: Data(String(buffer: data).utf8))
            try await client.shutdown()
        } catch {
            try await client.shutdown()
            throw error
        }
        #expect(answer.fields?.map(\.value) == ["Sunset over the bay"])
        #expect(answer.files?.map(\.sha256) == digests)
        let seen = events.all
        #expect(seen.count == 2, "\(seen)")
        if case .redirecting(307, let to)? = seen.first {
            #expect(to.hasSuffix("/upload"))
        } else {
            Issue.record("no redirect first: \(seen)")
        }
        if case .retrying(2, 3, _, _)? = seen.last {} else { Issue.record("no retry last: \(seen)") }
        #expect(try server.spooledFiles() == [])
    }

    /// Through a 307, then a failed attempt, then the server. On Linux the failed attempt is a 503 after the body, not a
    /// dropped connection: there FoundationNetworking (Swift 6.3) crashes the process when a connection drops in the
    /// middle of a body sent from a file (EasyHandle.swift:484, `try!` on `curl_easy_pause`, which answers 43 once the
    /// transfer has failed), as this test did with a drop in CI and in one of three local runs. Uploading.md says so.
    @Test func urlSessionFollowsA307ThenRetries() async throws {
        let server = try RunningServer()
        #if os(Linux)
        let failure = "status-after-body:503:0"
        #else
        let failure = "drop"
        #endif
        let front = try Front(before: server, actions: ["redirect:307:/upload", failure, "proxy"])
        let outbox = try Outbox()
        defer {
            front.stop()
            server.stop()
            outbox.remove()
        }
        let (body, digests) = try makeForm(outbox)
        let temporary = outbox.url.appendingPathComponent("spool")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        let request = URLRequest(url: URL(string: "http://127.0.0.1:\(front.port)/start")!)
        let retry = MultipartRetry(attempts: 2, initialDelay: .milliseconds(50))
        let (data, response) = try await URLSession.shared.upload(
            body, for: request, retry: retry, temporaryDirectory: temporary)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let answer = try JSONDecoder().decode(Answer.self, from: data)
        #expect(answer.files?.map(\.sha256) == digests)
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path) == [], "the body file is gone")
        #expect(try server.spooledFiles() == [])
    }
}

/// The events an upload told of, in order.
final class Events: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [HTTPClient.MultipartUploadEvent] = []
    func add(_ event: HTTPClient.MultipartUploadEvent) { lock.withLock { events.append(event) } }
    var all: [HTTPClient.MultipartUploadEvent] { lock.withLock { events } }
}
