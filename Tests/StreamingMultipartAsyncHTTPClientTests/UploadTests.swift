import AsyncHTTPClient
import Foundation
import MultipartTestSupport
import NIOCore
import NIOHTTP1
import StreamingMultipart
import StreamingMultipartAsyncHTTPClient
import Testing

/// A client that fails a refused connection at once and follows no redirect itself, so that the upload's own
/// retries and redirects are what the tests see. Never shut down: it lives as long as the test process.
let testClient: HTTPClient = {
    var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
    configuration.connectionPool.retryConnectionEstablishment = false
    return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
}()

/// `HTTPClient.upload` against Tests/Peers/upload_server.py (python-multipart reads each part and answers its
/// SHA-256), behind Tests/Peers/front.py where a test needs a redirect, a refusal or a dropped connection.
@Suite(
    .serialized, .enabled(if: Peers.pythonMultipart != nil, "needs python3 with python-multipart (.ci/run installs it)")
)
struct UploadTests {
    let python = Peers.pythonMultipart ?? "python3"
    let client = testClient

    /// A random form with a 3 MiB file part, so that the body outgrows the socket buffers.
    func makeForm(_ folder: TemporaryFolder) throws -> RandomForm {
        try RandomForm(seed: 7, folder: folder, maxSize: 100_000)
    }

    /// Sends `body` to `url` and returns the status, the server's reply (nil for a body that is not JSON) and the
    /// events the upload told of.
    func send(
        _ body: MultipartBody, to url: String, method: HTTPMethod = .POST,
        options: HTTPClient.MultipartUploadOptions = .init()
    ) async throws -> (status: Int, reply: PeerReply?, events: [HTTPClient.MultipartUploadEvent]) {
        let events = Locked<[HTTPClient.MultipartUploadEvent]>([])
        var options = options
        options.onEvent = { event in events.set(events.get() + [event]) }
        let response = try await client.upload(body, to: url, method: method, options: options)
        let data = try await response.body.collect(upTo: 1 << 20)
        let reply = try? JSONDecoder().decode(PeerReply.self, from: Data(String(buffer: data).utf8))
        return (Int(response.status.code), reply, events.get())
    }

    func retrying(_ attempts: Int) -> HTTPClient.MultipartUploadOptions {
        var options = HTTPClient.MultipartUploadOptions()
        options.retry = .init(attempts: attempts, initialDelay: .milliseconds(20))
        return options
    }

    @Test func formArrivesWholeWithItsContentLength() async throws {
        let server = try PeerUploadServer(python: python)
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let form = try makeForm(folder)
        let (status, reply, events) = try await send(form.body, to: server.url.absoluteString)
        #expect(status == 200, "server said: \(reply?.error ?? "?")")
        #expect(reply?.parts == form.expected)
        #expect(reply?.content_length == form.body.contentLength.map(String.init))
        #expect(reply?.transfer_encoding == nil)
        #expect(events.isEmpty)
    }

    @Test(arguments: [307, 308])
    func aRedirectThatKeepsTheMethodResendsTheWholeBody(status: Int) async throws {
        let server = try PeerUploadServer(python: python)
        let front = try PeerUploadServer.front(
            python: python, targetPort: server.port, actions: ["redirect:\(status):/upload", "proxy"])
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let form = try makeForm(folder)
        let (code, reply, events) = try await send(form.body, to: "http://127.0.0.1:\(front.port)/start")
        #expect(code == 200, "server said: \(reply?.error ?? "?")")
        #expect(reply?.method == "POST")
        #expect(reply?.parts == form.expected)
        #expect(events == [.redirecting(status: status, to: "http://127.0.0.1:\(front.port)/upload")])
    }

    @Test(arguments: [301, 302, 303])
    func aRedirectOfAPostContinuesWithAGetAsCurlDoes(status: Int) async throws {
        let server = try PeerUploadServer(python: python)
        let front = try PeerUploadServer.front(
            python: python, targetPort: server.port, actions: ["redirect:\(status):/done", "proxy"])
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (code, reply, events) = try await send(try makeForm(folder).body, to: "http://127.0.0.1:\(front.port)/")
        #expect(code == 200)
        #expect(reply?.method == "GET")
        #expect(events.count == 1)
    }

    @Test func aPutKeepsItsBodyThroughA302() async throws {
        let server = try PeerUploadServer(python: python)
        let front = try PeerUploadServer.front(
            python: python, targetPort: server.port, actions: ["redirect:302:/upload", "proxy"])
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let form = try makeForm(folder)
        let (_, reply, _) = try await send(form.body, to: "http://127.0.0.1:\(front.port)/", method: .PUT)
        #expect(reply?.method == "PUT")
        #expect(reply?.parts == form.expected)
    }

    @Test func redirectsStopAtTheLimit() async throws {
        let server = try PeerUploadServer(python: python)
        let front = try PeerUploadServer.front(python: python, targetPort: server.port, actions: ["redirect:307:/x"])
        var options = HTTPClient.MultipartUploadOptions()
        options.maxRedirects = 3
        let body = try smallBody()
        await #expect(throws: HTTPClientError.redirectLimitReached) {
            _ = try await send(body, to: "http://127.0.0.1:\(front.port)/", options: options)
        }
        options.maxRedirects = 0
        let (status, _, events) = try await send(body, to: "http://127.0.0.1:\(front.port)/", options: options)
        #expect(status == 307)
        #expect(events.isEmpty)
    }

    @Test func aDroppedConnectionIsRetriedWithTheWholeBody() async throws {
        let server = try PeerUploadServer(python: python)
        let front = try PeerUploadServer.front(python: python, targetPort: server.port, actions: ["drop", "proxy"])
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let form = try makeForm(folder)
        let (status, reply, events) = try await send(
            form.body, to: "http://127.0.0.1:\(front.port)/upload", options: retrying(2))
        #expect(status == 200, "server said: \(reply?.error ?? "?")")
        #expect(reply?.parts == form.expected)
        #expect(events.count == 1)
        if case .retrying(let attempt, let of, let delay, _)? = events.first {
            #expect(attempt == 2 && of == 3 && delay == .milliseconds(20))
        } else {
            Issue.record("no retry was told of: \(events)")
        }
    }

    @Test func aBusyAnswerIsRetriedAfterItsRetryAfter() async throws {
        let server = try PeerUploadServer(python: python)
        let front = try PeerUploadServer.front(
            python: python, targetPort: server.port, actions: ["status:503:1", "status:429", "proxy"])
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let form = try makeForm(folder)
        let (status, reply, events) = try await send(
            form.body, to: "http://127.0.0.1:\(front.port)/upload", options: retrying(3))
        #expect(status == 200)
        #expect(reply?.parts == form.expected)
        let delays = events.compactMap { if case .retrying(_, _, let delay, _) = $0 { delay } else { nil } }
        #expect(delays == [.seconds(1), .milliseconds(40)], "Retry-After: 1, then the doubled backoff")
    }

    @Test func retriesRunOutWithTheLastAnswer() async throws {
        let server = try PeerUploadServer(python: python)
        let front = try PeerUploadServer.front(python: python, targetPort: server.port, actions: ["status:500"])
        let body = try smallBody()
        let (status, _, events) = try await send(body, to: "http://127.0.0.1:\(front.port)/", options: retrying(2))
        #expect(status == 500)
        #expect(events.count == 2)
    }

    @Test func aRefusalIsNotRetried() async throws {
        let server = try PeerUploadServer(python: python)
        let front = try PeerUploadServer.front(python: python, targetPort: server.port, actions: ["status:413"])
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (status, _, events) = try await send(
            try makeForm(folder).body, to: "http://127.0.0.1:\(front.port)/", options: retrying(3))
        #expect(status == 413)
        #expect(events.isEmpty)
    }

    /// What one loopback connection may hold in flight before the client learns of a refusal: the sender's and the
    /// receiver's largest socket buffers (Linux's `tcp_wmem` and `tcp_rmem` maxima; 4 MiB and 32 MiB on CI's
    /// machines, where 8.6 MB once went out before the 413) and 1 MiB of the client's own; 16 MiB elsewhere.
    static let inFlightBound: Int64 = {
        func maximum(_ path: String) -> Int64? {
            (try? String(contentsOfFile: path, encoding: .utf8))?.split(whereSeparator: \.isWhitespace).last
                .flatMap { Int64($0) }
        }
        guard let send = maximum("/proc/sys/net/ipv4/tcp_wmem"), let receive = maximum("/proc/sys/net/ipv4/tcp_rmem")
        else { return 16 << 20 }
        return send + receive + (1 << 20)
    }()

    /// A refusal sent after the head (front.py answers 413 and closes) stops a 256 MiB body early: what was sent of
    /// it is at most what the socket buffers hold, and the answer is the refusal.
    @Test func aRefusalStopsALargeBodyEarly() async throws {
        let server = try PeerUploadServer(python: python)
        let front = try PeerUploadServer.front(python: python, targetPort: server.port, actions: ["status:413"])
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = folder.url.appendingPathComponent("sparse.bin")
        #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: 256 << 20)  // a sparse file: no disk written
        try handle.close()
        var body = MultipartBody()
        try body.append(.file(at: file, name: "big"))
        let sent = Locked<Int64>(0)
        let response = try await client.upload(body, to: "http://127.0.0.1:\(front.port)/upload") { progress in
            sent.set(progress.completedBytes)
        }
        #expect(response.status.code == 413)
        #expect(response.headers.first(name: "Connection") == "close")
        #expect(Self.inFlightBound < 64 << 20, "the bound says nothing: \(Self.inFlightBound) bytes")
        #expect(sent.get() < Self.inFlightBound, "stopped after \(sent.get()) of \(256 << 20) bytes")
    }

    @Test func aOneShotStreamIsNeverSentTwice() async throws {
        let server = try PeerUploadServer(python: python)
        let front = try PeerUploadServer.front(python: python, targetPort: server.port, actions: ["drop", "proxy"])
        var body = MultipartBody()
        try body.append(.stream(InputStream(data: Data(count: 300_000)), name: "log", length: 300_000))
        #expect(!body.isReproducible)
        let events = Locked<[HTTPClient.MultipartUploadEvent]>([])
        var options = retrying(3)
        options.onEvent = { event in events.set(events.get() + [event]) }
        await #expect(throws: (any Error).self) {
            _ = try await client.upload(body, to: "http://127.0.0.1:\(front.port)/upload", options: options)
        }
        #expect(events.get().isEmpty)
    }

    @Test func aRefusedConnectionIsRetriedThenThrown() async throws {
        let port = try PeerUploadServer.freePort(python: python)
        let events = Locked<[HTTPClient.MultipartUploadEvent]>([])
        var options = retrying(2)
        options.onEvent = { event in events.set(events.get() + [event]) }
        let body = try smallBody()
        await #expect(throws: (any Error).self) {
            _ = try await client.upload(body, to: "http://127.0.0.1:\(port)/", options: options)
        }
        #expect(events.get().count == 2)
    }

    @Test func aCompressedFormGoesChunkedWithItsEncoding() async throws {
        let server = try PeerUploadServer(python: python)
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let form = try makeForm(folder)
        var options = HTTPClient.MultipartUploadOptions()
        options.compression = .gzip
        let (status, reply, _) = try await send(form.body, to: server.url.absoluteString, options: options)
        #expect(status == 200, "server said: \(reply?.error ?? "?")")
        #expect(reply?.parts == form.expected)
        #expect(reply?.content_encoding == "gzip")
        #expect(reply?.transfer_encoding?.lowercased() == "chunked")
    }

    @Test func progressCountsTheWholeBody() async throws {
        let server = try PeerUploadServer(python: python)
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let form = try makeForm(folder)
        let last = Locked<MultipartBody.Progress?>(nil)
        let response = try await client.upload(form.body, to: server.url.absoluteString) { last.set($0) }
        _ = try await response.body.collect(upTo: 1 << 20)
        #expect(last.get()?.completedBytes == form.body.contentLength)
        #expect(last.get()?.fractionCompleted == 1)
    }

    func smallBody() throws -> MultipartBody {
        var body = MultipartBody()
        try body.append(.text("v", name: "f"))
        return body
    }
}
