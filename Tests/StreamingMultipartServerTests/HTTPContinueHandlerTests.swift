import Foundation
import MultipartTestSupport
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import StreamingMultipartServer

/// `100 Continue` goes out in order on a real HTTP/1 pipeline (NIO's decoder and encoder on an embedded channel): for
/// the request being answered, after every earlier response, never after the final response began, never twice,
/// never to HTTP/1.0.
@Suite struct HTTPContinueHandlerTests {
    /// A server pipeline with the handler, and what it writes, as text. Without NIO's pipelining assistance (as
    /// Hummingbird sets it up), pipelined request heads reach the handler at once, before earlier answers.
    final class Server {
        let channel = EmbeddedChannel()

        init(pipeliningAssistance: Bool = false, resumableUploads: ResumableUploads? = nil) throws {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                withPipeliningAssistance: pipeliningAssistance, withErrorHandling: false)
            try channel.pipeline.syncOperations.addHandler(HTTPContinueHandler(resumableUploads: resumableUploads))
        }

        /// Sends `text` as the client, and returns the request heads the application received.
        func receive(_ text: String) throws -> [HTTPRequestHead] {
            try channel.writeInbound(ByteBuffer(string: text))
            var heads: [HTTPRequestHead] = []
            while let part = try channel.readInbound(as: HTTPServerRequestPart.self) {
                if case .head(let head) = part { heads.append(head) }
            }
            return heads
        }

        /// Writes a whole response as the application does.
        func respond(_ status: HTTPResponseStatus, body: String = "") throws {
            var head = HTTPResponseHead(version: .http1_1, status: status)
            head.headers.add(name: "content-length", value: String(body.utf8.count))
            try channel.writeOutbound(HTTPServerResponsePart.head(head))
            if !body.isEmpty {
                try channel.writeOutbound(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: body))))
            }
            try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        }

        /// Everything written to the client so far, as text.
        func sent() throws -> String {
            var text = ""
            while var buffer = try channel.readOutbound(as: ByteBuffer.self) {
                text += buffer.readString(length: buffer.readableBytes) ?? ""
            }
            return text
        }
    }

    static func post(_ path: String, expect: Bool = true, version: String = "1.1") -> String {
        "POST \(path) HTTP/\(version)\r\nHost: x\r\nContent-Length: 3\r\n"
            + (expect ? "Expect: 100-continue\r\n" : "") + "\r\n"
    }

    @Test func aLoneRequestGetsItsContinueAtOnce() throws {
        let server = try Server()
        _ = try server.receive(Self.post("/upload"))
        #expect(try server.sent() == "HTTP/1.1 100 Continue\r\n\r\n")
        _ = try server.receive("abc")
        try server.respond(.ok, body: "ok")
        #expect(try server.sent().hasPrefix("HTTP/1.1 200 OK\r\n"))
    }

    /// A resumable creation (interop version 8) gets its `104` with a location that names the server's node, and
    /// the route its token; without interim answers (behind a proxy that cannot pass one on) no `104` goes, a
    /// creation that sends the first piece (`Upload-Complete: ?0`) is still an upload (its `201` will say where), and
    /// a complete one is a plain request.
    @Test(arguments: [true, false]) func aCreationsInterimAnswerGoesOnlyWhenTheServerSendsThem(interim: Bool) throws {
        let uploads = ResumableUploads(.init(node: "east-1 ü", interimResponses: interim))
        #expect(uploads.configuration.node == "east1")
        for complete in ["?1", "?0"] {
            let server = try Server(resumableUploads: uploads)
            let heads = try server.receive(
                "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nUpload-Draft-Interop-Version: 8\r\n"
                    + "Upload-Complete: \(complete)\r\n\r\n")
            let token = heads.first?.headers.first(name: ResumableUploads.tokenField)
            let sent = try server.sent()
            if interim {
                #expect(sent.hasPrefix("HTTP/1.1 104 Upload Resumption Supported\r\n"), "\(sent)")
                #expect(sent.contains("Location: /resumable_upload/east1-"), "\(sent)")
                #expect(token?.hasPrefix("east1-") == true)
            } else {
                #expect(sent == "", "no interim answer: \(sent)")
                #expect((token != nil) == (complete == "?0"), "an upload only when the 201 can name it")
            }
        }
    }

    @Test func aPipelinedRequestGetsItsContinueAfterTheAnswersBeforeIt() throws {
        // Three GETs, then a POST with Expect, in one write: the 100 used to go out before the GETs' answers.
        let server = try Server()
        let gets = String(repeating: "GET / HTTP/1.1\r\nHost: x\r\n\r\n", count: 3)
        #expect(try server.receive(gets + Self.post("/upload")).count == 4)
        #expect(try server.sent() == "")
        for index in 0..<3 { try server.respond(.ok, body: "get \(index)") }
        let stream = try server.sent()
        let continueAt = try #require(stream.range(of: "HTTP/1.1 100 Continue\r\n\r\n"), "\(stream)")
        #expect(stream[..<continueAt.lowerBound].hasSuffix("get 2"), "the 100 came before an earlier answer: \(stream)")
        #expect(stream[continueAt.upperBound...].isEmpty)
        #expect(stream.components(separatedBy: "HTTP/1.1 200 OK").count == 4)
    }

    @Test func aServerThatSendsItsOwnContinueGetsNoSecond() throws {
        // The POST waits behind a GET; the application answers the GET, then writes a 100 itself: one 100 in all.
        let server = try Server()
        _ = try server.receive(
            "GET / HTTP/1.1\r\nHost: x\r\n\r\n" + Self.post("/upload") + "abc" + Self.post("/next") + "abc")
        var head = HTTPResponseHead(version: .http1_1, status: .ok)
        head.headers.add(name: "content-length", value: "0")
        try server.channel.writeOutbound(HTTPServerResponsePart.head(head))
        #expect(try server.sent().contains("200 OK"))
        try server.channel.writeOutbound(HTTPServerResponsePart.end(nil))  // the POST is current: 100 from the handler
        #expect(try server.sent() == "HTTP/1.1 100 Continue\r\n\r\n")
        try server.respond(.payloadTooLarge)  // its answer; then /next is current and gets its own single 100
        let sent = try server.sent()
        #expect(sent.hasPrefix("HTTP/1.1 413 Payload Too Large\r\n"), "\(sent)")
        #expect(sent.components(separatedBy: "100 Continue").count == 2, "\(sent)")
    }

    @Test func withNIOsPipeliningAssistanceTheOrderHoldsToo() throws {
        let server = try Server(pipeliningAssistance: true)
        _ = try server.receive("GET / HTTP/1.1\r\nHost: x\r\n\r\n" + Self.post("/upload"))
        #expect(try server.sent() == "")
        try server.respond(.ok, body: "get")
        server.channel.read()  // the application asks for more: NIO lets the held-back request through
        #expect(try server.sent() == "HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\ngetHTTP/1.1 100 Continue\r\n\r\n")
    }

    @Test func http10AndNoExpectationGetNone() throws {
        let server = try Server()
        _ = try server.receive(Self.post("/old", version: "1.0"))
        #expect(try server.sent() == "")
        let plain = try Server()
        _ = try plain.receive(Self.post("/plain", expect: false))
        #expect(try plain.sent() == "")
    }

    /// A client that pipelines a flood of requests before reading any answer (a server without backpressure reads
    /// them all): the bookkeeping is constant work per request. The requests of 4 and 16 MB of
    /// `GET / HTTP/1.1\r\n\r\n` arrive, then their responses end; the thread CPU time of 16 MB is near 4 times that of
    /// 4 MB (an array shifted on every answer, as before, measured 12.8 times). At 1, 16 and 64 MB it measured 0.57,
    /// 12.0 and 45.7 s in a debug build, where NIO's ring buffer is slow, so the test stops at 16.
    @Test func aFloodOfPipelinedRequestsCostsLinearTime() async throws {
        @Sendable func flood(megabytes: Int) -> Duration {
            let requests = megabytes << 20 / 18
            let (_, time) = measureThreadCPUTime {
                var machine = ContinueStateMachine()
                var continues = 0
                let owed = [HTTPResponseHead(version: .http1_1, status: .continue)]
                for index in 0..<requests where !machine.requestArrived(interims: index % 2 == 1 ? owed : []).isEmpty {
                    continues += 1
                }
                for _ in 0..<requests {
                    machine.responseHeadWritten(status: 200)
                    if !machine.responseEnded().isEmpty { continues += 1 }
                }
                #expect(continues == requests / 2 && machine.pending.isEmpty)
            }
            return time
        }
        let times = try await onThreadOfItsOwn {
            _ = flood(megabytes: 1)  // warm up
            return [4, 16].map { megabytes in (0..<2).map { _ in flood(megabytes: megabytes) }.min()! }
        }
        let ratio = times[1] / times[0]
        print("HTTPContinueHandlerTests: pipelined flood, thread CPU time 4/16 MB: \(times), 16/4 = \(ratio)")
        #expect(ratio < 8, "16 MB took \(ratio) times as long as 4 MB")
    }
}
