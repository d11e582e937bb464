import AsyncHTTPClient
import Foundation
import MultipartTestSupport
import NIOCore
import NIOHTTP1
import StreamingMultipart
import StreamingMultipartAsyncHTTPClient
import Testing

/// `testClient` with `enableInterimResponses()`: its uploads wait for `100 Continue`. Never shut down.
let watchingClient: HTTPClient = {
    var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
    configuration.connectionPool.retryConnectionEstablishment = false
    configuration.enableInterimResponses()
    return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
}()

/// A body sent with `Expect: 100-continue` waits for the interim answer on a client set up for it, as curl's does:
/// Tests/Peers/front.py stands before the upload server, answers `100 Continue` late, never, or refuses at once, and
/// reports what reached it before.
@Suite(
    .serialized, .enabled(if: Peers.pythonMultipart != nil, "needs python3 with python-multipart (.ci/run installs it)")
)
struct ExpectContinueTests {
    let python = Peers.pythonMultipart ?? "python3"

    /// The front doing `action` before a new upload server (which lives as long as the front: the front holds it),
    /// and a random form with a 3 MiB file part in a new folder, for the caller to remove. The form is over curl's
    /// 1 MiB, so it carries `Expect: 100-continue`.
    func scene(_ action: String) throws -> (front: Front, form: RandomForm, folder: TemporaryFolder) {
        let server = try PeerUploadServer(python: python)
        let front = try PeerUploadServer.front(python: python, targetPort: server.port, actions: [action])
        let folder = try TemporaryFolder()
        return (Front(script: front, server: server), try RandomForm(seed: 11, folder: folder, maxSize: 50_000), folder)
    }

    /// front.py and the server behind it, which ends with it.
    struct Front {
        let script: PeerUploadServer
        let server: PeerUploadServer
        var port: Int { script.port }
        func nextLine() throws -> String { try script.nextLine() }
    }

    /// Sends `body` through `client` and returns the status, the server's reply, the events and the bytes the body
    /// produced.
    func send(
        _ body: MultipartBody, to port: Int, with client: HTTPClient,
        options: HTTPClient.MultipartUploadOptions = .init()
    ) async throws -> (status: Int, reply: PeerReply?, events: [HTTPClient.MultipartUploadEvent], produced: Int64) {
        let events = Locked<[HTTPClient.MultipartUploadEvent]>([])
        let produced = Locked<Int64>(0)
        var options = options
        options.onEvent = { event in events.set(events.get() + [event]) }
        let response = try await client.upload(body, to: "http://127.0.0.1:\(port)/upload", options: options) {
            produced.set($0.completedBytes)
        }
        let data = try await response.body.collect(upTo: 1 << 20)
        let reply = try? JSONDecoder().decode(PeerReply.self, from: Data(String(buffer: data).utf8))
        return (Int(response.status.code), reply, events.get(), produced.get())
    }

    /// The front answers `100 Continue` 500 ms after the head: none of the body reaches it before, the whole form
    /// after, and the upload reports the interim answer. (A client without the observer sends at once: AsyncHTTPClient
    /// drops interim answers. How soon depends on the machine's load, so no test waits for it.)
    @Test func theBodyWaitsForContinue() async throws {
        let (front, form, folder) = try scene("continue:500")
        defer { folder.remove() }

        let (status, reply, events, _) = try await send(form.body, to: front.port, with: watchingClient)
        #expect(try front.nextLine() == "early 0")
        #expect(status == 200, "server said: \(reply?.error ?? "?")")
        #expect(reply?.parts == form.expected)
        #expect(reply?.headers?["expect"] == nil, "the front forwards the request without it")
        #expect(events == [.interimResponse(.init(status: .continue))])
    }

    /// No interim answer ever: the body goes after `expectContinueTimeout` (the front measures about that long from
    /// the head to the body's first byte) and arrives whole.
    @Test func withoutContinueTheBodyGoesAfterTheTimeout() async throws {
        let (front, form, folder) = try scene("continue:never")
        defer { folder.remove() }
        var options = HTTPClient.MultipartUploadOptions()
        options.expectContinueTimeout = .seconds(3)

        let (status, reply, events, _) = try await send(
            form.body, to: front.port, with: watchingClient, options: options)
        let waited = try front.nextLine()
        let milliseconds = try #require(Int(waited.dropFirst("waited ".count)), "\(waited)")
        // The front's clock starts when it has read the head: on a loaded machine, up to a second after it was sent.
        #expect(milliseconds >= 2000, "the body went \(milliseconds) ms after the head")
        #expect(status == 200, "server said: \(reply?.error ?? "?")")
        #expect(reply?.parts == form.expected)
        #expect(events.isEmpty)
    }

    /// A refusal before `100 Continue` is the answer, and none of the body is read or sent: the front counts no byte
    /// after its 413 until the client closes, and the body produced nothing.
    @Test func aRefusalBeforeContinueGetsNoneOfTheBody() async throws {
        let (front, form, folder) = try scene("refuse:413")
        defer { folder.remove() }

        let (status, _, events, produced) = try await send(form.body, to: front.port, with: watchingClient)
        #expect(status == 413)
        #expect(try front.nextLine() == "after 0")
        #expect(produced == 0)
        #expect(events.isEmpty)
    }

    /// With `expectContinueThreshold` nil the request carries no `Expect` and its body never waits: a wait for the
    /// front that sends no 100 would outlast the attempt's timeout.
    @Test func withoutExpectTheBodyNeverWaits() async throws {
        let (front, form, folder) = try scene("continue:never")
        defer { folder.remove() }
        var options = HTTPClient.MultipartUploadOptions()
        options.expectContinueThreshold = nil
        options.expectContinueTimeout = .seconds(600)
        options.timeout = .seconds(30)

        let (status, reply, _, _) = try await send(form.body, to: front.port, with: watchingClient, options: options)
        #expect(try front.nextLine().hasPrefix("waited "))
        #expect(status == 200 && reply?.parts == form.expected)
        #expect(reply?.headers?["expect"] == nil)
    }
}
