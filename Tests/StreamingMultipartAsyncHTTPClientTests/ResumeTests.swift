import AsyncHTTPClient
import Foundation
import MultipartTestSupport
import NIOCore
import NIOHTTP1
import StreamingMultipart
import StreamingMultipartAsyncHTTPClient
import Testing

/// An upload that offers resumption resumes after a dropped connection, sending only what the server lacks:
/// Tests/Peers/resumable_server.py (draft-ietf-httpbis-resumable-upload, interop version 6) behind front.py, which
/// resets connections after a number of bytes.
@Suite(
    .serialized, .enabled(if: Peers.pythonMultipart != nil, "needs python3 with python-multipart (.ci/run installs it)")
)
struct ResumeTests {
    let python = Peers.pythonMultipart ?? "python3"

    /// The server's answer to a resumable upload.
    struct Reply: Decodable {
        var requests: Int?
        // swift-format-ignore: AlwaysUseLowerCamelCase
        var bytes_received: Int64?  // the peer's JSON key
        var parts: [PeerPart]?
        var error: String?
    }

    /// The resumable server (with `arguments`) behind a front that takes `actions`, one per connection.
    func servers(_ actions: [String], arguments: [String] = []) throws -> (
        server: PeerUploadServer, front: PeerUploadServer
    ) {
        let server = try PeerUploadServer(python: python, script: "resumable_server.py", arguments: arguments)
        return (server, try PeerUploadServer.front(python: python, targetPort: server.port, actions: actions))
    }

    /// A random form with a 3 MiB file part and every part's length known (a body of unknown length offers no
    /// resumption): the first seed from 1 that draws no stream without a length.
    func knownLengthForm(_ folder: TemporaryFolder) throws -> RandomForm {
        for seed in 1...100 {
            let form = try RandomForm(seed: UInt64(seed), folder: folder, maxSize: 50_000)
            if form.body.contentLength != nil { return form }
        }
        throw MultipartError(code: .invalidState, message: "no seed up to 100 draws a form of known length")
    }

    func send(
        _ body: MultipartBody, to port: Int, options: HTTPClient.MultipartUploadOptions
    ) async throws -> (status: Int, reply: Reply?, events: [HTTPClient.MultipartUploadEvent]) {
        let events = Locked<[HTTPClient.MultipartUploadEvent]>([])
        var options = options
        options.onEvent = { event in events.set(events.get() + [event]) }
        let response = try await watchingClient.upload(body, to: "http://127.0.0.1:\(port)/upload", options: options)
        let data = try await response.body.collect(upTo: 1 << 20)
        return (
            Int(response.status.code), try? JSONDecoder().decode(Reply.self, from: Data(String(buffer: data).utf8)),
            events.get()
        )
    }

    /// An upload of a known-length form through a front that takes `actions` before the resumable server (with
    /// `arguments`), expected to fail: its error, its events and its body's length.
    func failingUpload(
        _ actions: [String], arguments: [String] = [], maxResumptions: Int
    ) async throws -> (error: (any Error)?, events: [HTTPClient.MultipartUploadEvent], length: Int64) {
        let (server, front) = try servers(actions, arguments: arguments)
        defer { withExtendedLifetime(server) {} }  // the server ends when its object goes
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let form = try knownLengthForm(folder)
        var options = HTTPClient.MultipartUploadOptions()
        options.maxResumptions = maxResumptions
        let events = Locked<[HTTPClient.MultipartUploadEvent]>([])
        options.onEvent = { event in events.set(events.get() + [event]) }
        let error = await #expect(throws: (any Error).self) {
            _ = try await watchingClient.upload(
                form.body, to: "http://127.0.0.1:\(front.port)/upload", options: options)
        }
        return (error, events.get(), try #require(form.body.contentLength))
    }

    /// Cut after 1 MB (and again after 1 MB on the connection that resumes it), a 3 MiB form arrives whole, one
    /// request more than it resumed, and the server received its bytes about once: at most 1.1 times the body. In
    /// interop version 8 (draft 09, the default) and 6 (drafts 04–05, as swift-nio-extras' server speaks it).
    @Test(arguments: ["8", "6"]) func aFormCutTwiceResumesAndArrivesWhole(version: String) async throws {
        let (server, front) = try servers(["cut:1000000", "cut:1000000", "proxy"])
        defer { withExtendedLifetime(server) {} }  // the server ends when its object goes
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let form = try knownLengthForm(folder)
        let length = try #require(form.body.contentLength)
        var options = HTTPClient.MultipartUploadOptions()
        options.maxResumptions = 5
        options.resumableInteropVersion = version

        let (status, reply, events) = try await send(form.body, to: front.port, options: options)
        #expect(status == 200, "server said: \(reply?.error ?? "?")")
        #expect(reply?.parts == form.expected)
        let received = try #require(reply?.bytes_received)
        #expect(received >= length && Double(received) <= 1.1 * Double(length), "\(received) for \(length) bytes")
        // The front cuts per connection: the first cut always lands; the second lands when the PATCH reuses the
        // HEAD's connection, which a loaded machine's pool may not do (the PATCH then gets the proxy).
        let resumed = events.compactMap { if case .resuming(let from, _, _) = $0 { from } else { nil } }
        #expect((1...2).contains(resumed.count), "\(events)")
        #expect(resumed == resumed.sorted() && resumed.allSatisfy { $0 > 0 }, "\(events)")
        #expect(reply?.requests == resumed.count + 1, "one append a resumption")
        let announcements = events.compactMap { event -> String? in
            guard case .interimResponse(let interim) = event, interim.status.code == 104 else { return nil }
            return interim.headers.first(name: "Upload-Draft-Interop-Version")
        }
        #expect(announcements.first == version, "the 104 speaks the version offered: \(events)")
    }

    /// A server that forgot the upload (it restarted: its location answers 404) gets the body again from its start,
    /// once, though the retry policy allows no retry; the upload completes.
    @Test func anUploadTheServerForgotStartsOver() async throws {
        let (server, front) = try servers(["cut:1000000", "proxy"], arguments: ["--forgetful"])
        defer { withExtendedLifetime(server) {} }  // the server ends when its object goes
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let form = try knownLengthForm(folder)
        var options = HTTPClient.MultipartUploadOptions()
        options.maxResumptions = 5
        let (status, reply, events) = try await send(form.body, to: front.port, options: options)
        #expect(status == 200, "server said: \(reply?.error ?? "?")")
        #expect(reply?.parts == form.expected)
        #expect(events.filter { $0 == .startingOver }.count == 1, "\(events)")
        #expect(!events.contains { if case .resuming = $0 { true } else { false } }, "\(events)")
    }

    /// With `createsUploadFirst`, a creation answered `201` with a location on another origin is the upload's answer:
    /// no append follows it, and none of the body is produced.
    @Test func aCreationsLocationOnAnotherOriginIsNotFollowed() async throws {
        let front = try PeerUploadServer.front(
            python: python, targetPort: 9, actions: ["redirect:201:http://127.0.0.2:9/resumable_upload/x"])
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let form = try knownLengthForm(folder)
        var options = HTTPClient.MultipartUploadOptions()
        options.maxResumptions = 3
        options.createsUploadFirst = true
        let produced = Locked<Int64>(0)
        let response = try await watchingClient.upload(
            form.body, to: "http://127.0.0.1:\(front.port)/upload", options: options,
            progress: { progress in produced.set(progress.completedBytes) })
        #expect(response.status == .created)
        #expect(produced.get() == 0, "no byte of the body went")
    }

    /// Without `maxResumptions` the request offers no resumption: the peer, which takes only resumable uploads,
    /// answers it 404 before its body.
    @Test func withoutMaxResumptionsTheRequestOffersNone() async throws {
        let (server, front) = try servers(["proxy"])
        defer { withExtendedLifetime(server) {} }  // the server ends when its object goes
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let form = try knownLengthForm(folder)
        let (status, _, events) = try await send(form.body, to: front.port, options: .init())
        #expect(status == 404)
        #expect(!events.contains { if case .resuming = $0 { true } else { false } })
    }

    /// The resumptions are bounded: a front that cuts every connection ends the upload with the connection's error
    /// after `maxResumptions` of them.
    @Test func resumptionsAreBounded() async throws {
        let (_, events, _) = try await failingUpload(["cut:500000"], maxResumptions: 3)
        let resumed = events.filter { if case .resuming = $0 { true } else { false } }
        #expect(resumed.count == 3, "\(events)")
    }

    /// A server that reads every append and answers 409 draws the body about twice, not once a resumption: the
    /// bytes appends send that the server does not keep stay within the body's length, then the upload fails with
    /// `limitExceeded` (before the bound, ten resumptions re-sent the body ten times).
    @Test func appendsRefusedAgainAndAgainReSendAtMostTheBody() async throws {
        let (error, events, length) = try await failingUpload(
            ["cut:1000000", "proxy"], arguments: ["--conflicting"], maxResumptions: 10)
        #expect((error as? MultipartError)?.code == .limitExceeded, "\(String(describing: error))")
        let resent = events.compactMap { if case .resuming(let from, _, _) = $0 { length - from } else { nil } }
        #expect((1...2).contains(resent.count), "\(events)")
        #expect(resent.reduce(0, +) <= 2 * length, "re-sent \(resent) of a \(length)-byte body")
    }

    /// A `104` of another interop version than the one the request offered is ignored (the draft: a client ignores
    /// a mismatching version): one it does not know (99), and one it knows but did not offer (6, offered 8). The cut
    /// upload is not resumed at the announced location, and fails with the connection.
    @Test(arguments: ["99", "6"]) func aResumptionAnnouncedInAnotherVersionIsIgnored(announced: String) async throws {
        let (_, events, _) = try await failingUpload(
            ["cut:1000000", "proxy"], arguments: ["--announce-version", announced], maxResumptions: 5)
        let interims = events.compactMap { if case .interimResponse(let interim) = $0 { interim } else { nil } }
        #expect(interims.contains { $0.status.code == 104 }, "the 104 came: \(events)")
        #expect(!events.contains { if case .resuming = $0 { true } else { false } }, "\(events)")
    }

    /// One body sent to two servers at once, twice to each: every upload resumes at its own server's location. The
    /// interim answers' gates were found by the request's `Content-Type`, which two uploads of one body share, so
    /// an upload could take the other server's `104` and send that server's upload token (its only credential) to
    /// its own server, which answered 404 (a start over). Each gate is now found by a token of its own request.
    @Test func oneBodyToTwoServersAtOnceResumesEachAtItsOwnLocation() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let form = try knownLengthForm(folder)
        var settings = HTTPClient.MultipartUploadOptions()
        settings.maxResumptions = 5
        let (body, options) = (form.body, settings)
        // Three rounds: before the fix, one round in three went right by chance.
        for round in 1...3 {
            let cuts = Array(repeating: "cut:1000000", count: 2) + Array(repeating: "proxy", count: 30)
            let (a, frontA) = try servers(cuts)
            let (b, frontB) = try servers(cuts)
            defer { withExtendedLifetime((a, b)) {} }  // the servers end when their objects go
            let results = try await withThrowingTaskGroup(
                of: (status: Int, reply: Reply?, events: [HTTPClient.MultipartUploadEvent]).self
            ) { group in
                for port in [frontA.port, frontB.port, frontA.port, frontB.port] {
                    group.addTask { try await self.send(body, to: port, options: options) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for (status, reply, events) in results {
                #expect(status == 200 && reply?.parts == form.expected, "round \(round): \(reply?.error ?? "?")")
                #expect(!events.contains(.startingOver), "round \(round) resumed elsewhere: \(events)")
                #expect(events.contains { if case .resuming = $0 { true } else { false } }, "\(events)")
            }
        }
    }

    /// The token that finds a request's gate is taken out of the head before it is written: the server never sees it.
    @Test func theGatesTokenNeverReachesTheServer() async throws {
        let server = try PeerUploadServer(python: python)
        var body = MultipartBody()
        try body.append(.data(Data(repeating: 0x61, count: 2 << 20), name: "f", filename: "f.bin"))
        let response = try await watchingClient.upload(body, to: server.url.absoluteString)
        let reply = try JSONDecoder().decode(
            PeerReply.self, from: Data(String(buffer: try await response.body.collect(upTo: 1 << 20)).utf8))
        #expect(reply.headers?["expect"] == "100-continue", "the request was watched: \(reply.headers ?? [:])")
        #expect(reply.headers?.keys.contains { $0.lowercased() == "multipart-upload-attempt" } == false)
    }
}
