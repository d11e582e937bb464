import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import StreamingMultipartServer

/// `configureGuardedHTTPServerPipeline(guards:)` on an embedded channel, with NIO's real HTTP/1 codec and the clock
/// moved by hand: each guard answers what it is for and closes. The Hummingbird example's hostile-client suite drives
/// the same guards over real sockets.
@Suite struct HTTPServerGuardsTests {
    /// An active embedded channel with the guards, as a server's child channel has them.
    static func server(_ guards: HTTPServerGuards = HTTPServerGuards()) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.configureGuardedHTTPServerPipeline(guards: guards)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    /// Everything written to the client so far, as text.
    static func sent(_ channel: EmbeddedChannel) throws -> String {
        var text = ""
        while var buffer = try channel.readOutbound(as: ByteBuffer.self) {
            text += buffer.readString(length: buffer.readableBytes) ?? ""
        }
        return text
    }

    /// The answer and the close. An embedded channel cannot shut only its sending side: the guard's close is a whole
    /// one here, and NIO's decoder, in the middle of the refused request, reports the stream's end as an error.
    @Test(arguments: [
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "501", "unsupportedTransferCoding"),
        ("POST / HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", "400", "invalidFraming"),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", "400", nil),
    ])
    func doubtfulFramingIsAnsweredAndClosed(request: String, status: String, code: String?) throws {
        let channel = try Self.server()
        do {
            try channel.writeInbound(ByteBuffer(string: request))
        } catch let error as HTTPParserError {
            #expect(!channel.isActive || code == nil, "\(error)")  // the close above, or the parser's own refusal
        }
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) == nil, "the request went on")
        let answer = try Self.sent(channel)
        #expect(answer.hasPrefix("HTTP/1.1 \(status) "), "\(answer)")
        #expect(answer.lowercased().contains("connection: close"), "\(answer)")
        if let code { #expect(answer.contains("\"code\":\"\(code)\""), "\(answer)") }
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))  // past the linger
        #expect(!channel.isActive)
    }

    /// A refused request behind one being answered waits for that answer's end: never two heads at once (NIO's
    /// `HTTPServerProtocolErrorHandler` stops the process on one).
    @Test func aRefusalPipelinedBehindAnAnswerWaitsForIt() throws {
        let channel = try Self.server()
        try channel.writeInbound(
            ByteBuffer(
                string:
                    "GET / HTTP/1.1\r\nHost: x\r\n\r\nPOST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
            ))
        guard case .head = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("the first request did not arrive")
            return
        }
        var head = HTTPResponseHead(version: .http1_1, status: .ok)
        head.headers.add(name: "content-length", value: "2")
        try channel.writeOutbound(HTTPServerResponsePart.head(head))
        #expect(try Self.sent(channel).hasPrefix("HTTP/1.1 200 "))
        try channel.writeOutbound(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: "ok"))))
        do { try channel.writeOutbound(HTTPServerResponsePart.end(nil)) } catch {}  // the close that follows
        let rest = try Self.sent(channel)
        #expect(rest.hasPrefix("okHTTP/1.1 501 "), "\(rest)")
    }

    @Test func aHeadThatDoesNotArriveInTimeIsAnswered408() throws {
        let channel = try Self.server(HTTPServerGuards(headerTimeout: .seconds(2)))
        try channel.writeInbound(ByteBuffer(string: "POST /upload HTTP/1.1\r\nHost: x\r\nContent-"))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1900))
        #expect(try Self.sent(channel).isEmpty && channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(200))
        let answer = try Self.sent(channel)
        #expect(answer.hasPrefix("HTTP/1.1 408 ") && answer.contains("headerTimeout"), "\(answer)")
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!channel.isActive)
    }

    @Test func aWholeHeadStopsTheDeadlineAndAnAnswerWithCloseEndsTheConnection() throws {
        let channel = try Self.server(HTTPServerGuards(headerTimeout: .seconds(2), linger: .milliseconds(300)))
        try channel.writeInbound(ByteBuffer(string: "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"))
        guard case .head = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("no request head")
            return
        }
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))  // the body may take its time: the server's rule
        let early = try Self.sent(channel)
        #expect(channel.isActive && early.isEmpty)
        var head = HTTPResponseHead(version: .http1_1, status: .payloadTooLarge)
        head.headers.add(name: "content-length", value: "0")
        head.headers.add(name: "connection", value: "close")
        try channel.writeOutbound(HTTPServerResponsePart.head(head))
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        #expect(try Self.sent(channel).hasPrefix("HTTP/1.1 413 "))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(400))  // an embedded channel closes whole at once
        #expect(!channel.isActive, "still open after its linger")
    }

    /// A 404 (no `Connection: close`) answered before its request's body: the connection stays for a small rest of
    /// that body and a next request, and closes once more than `maxUnreadBody` of it arrives after the answer (a
    /// client pushed 11–13 GB in 5 s into such a connection). A 200 the same: an upload answered at its form's close
    /// delimiter keeps its connection, and an epilogue pushed after it (4.7 GB in 5 s into SmallUploadServer) is
    /// cut at the bound.
    @Test(arguments: [HTTPResponseStatus.notFound, .conflict, .ok])
    func anAnswerBeforeAnUnreadBodyClosesPastABound(status: HTTPResponseStatus) throws {
        let channel = try Self.server(HTTPServerGuards(linger: .milliseconds(300)))
        try channel.writeInbound(
            ByteBuffer(string: "PATCH /resumable/x HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n"))
        var head = HTTPResponseHead(version: .http1_1, status: status)
        head.headers.add(name: "content-length", value: "0")
        try channel.writeOutbound(HTTPServerResponsePart.head(head))
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        #expect(try Self.sent(channel).hasPrefix("HTTP/1.1 \(status.code) "))
        let chunk = ByteBuffer(repeating: 0x61, count: 64 * 1024)
        for _ in 0..<4 { try channel.writeInbound(chunk) }  // 256 KiB: the bound, not past it
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(channel.isActive, "closed at the bound")
        // Past it: an embedded channel closes whole at once, and NIO's decoder, mid-body, reports the end as an error.
        _ = try? channel.writeInbound(chunk)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))  // the linger
        #expect(!channel.isActive, "\(status): still open past the bound")
        _ = try? channel.finish()
    }

    /// A small body that arrives after a 404 ends its request: the connection serves the next one.
    @Test func aSmallUnreadRestKeepsTheConnection() throws {
        let channel = try Self.server()
        try channel.writeInbound(ByteBuffer(string: "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"))
        var head = HTTPResponseHead(version: .http1_1, status: .notFound)
        head.headers.add(name: "content-length", value: "0")
        try channel.writeOutbound(HTTPServerResponsePart.head(head))
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        try channel.writeInbound(ByteBuffer(repeating: 0x61, count: 100_000))
        try channel.writeInbound(ByteBuffer(string: "GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
        var heads = 0
        while let part = try channel.readInbound(as: HTTPServerRequestPart.self) {
            if case .head = part { heads += 1 }
        }
        #expect(heads == 2 && channel.isActive)
        // The next request's 404 is answered after its end: past the bound nothing closes.
        try channel.writeOutbound(HTTPServerResponsePart.head(head))
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        #expect(channel.isActive)
        _ = try? channel.finish()
    }

    @Test func pastTheConnectionLimitA503AndNothingRead() throws {
        let limit = ConnectionLimit(limit: 1)
        let first = try Self.server(HTTPServerGuards(connections: limit))
        #expect(limit.open == 1)
        let second = try Self.server(HTTPServerGuards(connections: limit))
        let answer = try Self.sent(second)
        #expect(answer.hasPrefix("HTTP/1.1 503 ") && answer.contains("Retry-After: 1"), "\(answer)")
        try second.writeInbound(ByteBuffer(string: "GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(try second.readInbound(as: HTTPServerRequestPart.self) == nil, "a refused connection was read")
        _ = try first.close().wait()
        first.embeddedEventLoop.run()
        #expect(limit.open == 0, "the first connection's place was not given back")
        let third = try Self.server(HTTPServerGuards(connections: limit))
        #expect(try Self.sent(third).isEmpty && limit.open == 1)
    }

    @Test func aWriteThatMakesNoProgressClosesTheConnection() throws {
        let channel = try Self.server(HTTPServerGuards(writeTimeout: .seconds(3)))
        channel.isWritable = false
        channel.pipeline.fireChannelWritabilityChanged()
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
    }

    @Test func writesThatProgressAgainStopTheClock() throws {
        let channel = try Self.server(HTTPServerGuards(headerTimeout: .seconds(60), writeTimeout: .seconds(10)))
        channel.isWritable = false
        channel.pipeline.fireChannelWritabilityChanged()
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        channel.isWritable = true  // the client read some
        channel.pipeline.fireChannelWritabilityChanged()
        channel.embeddedEventLoop.advanceTime(by: .seconds(30))
        #expect(channel.isActive)
    }

    /// A server with an idle timeout of 5 s (and a head deadline out of the way) that asked to read; with `posting`,
    /// a request of that `Content-Length` has come with the first 10 bytes of its body.
    static func idleServer(posting length: Int? = nil) throws -> EmbeddedChannel {
        let channel = try server(HTTPServerGuards(headerTimeout: .seconds(600), idleTimeout: .seconds(5)))
        channel.read()
        if let length {
            try channel.writeInbound(
                ByteBuffer(string: "POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: \(length)\r\n\r\n0123456789"))
        }
        return channel
    }

    /// The idle timeout counts the client's silence while the server waits to read, between requests or in a body.
    @Test func aClientSilentWhileTheServerWaitsToReadIsClosed() throws {
        let channel = try Self.idleServer()
        channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        #expect(channel.isActive)
        try channel.writeInbound(ByteBuffer(string: "POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n"))
        channel.read()  // bytes came: the clock starts again from the next wait
        channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
    }

    /// The server holding a body back of its own accord (no read asked for: an upload waiting for its store to take
    /// a part) is not the client's idleness: Hummingbird's timeout closed such an upload without an answer.
    @Test func aBodyTheServerHoldsBackStopsTheIdleClock() throws {
        let channel = try Self.idleServer(posting: 100)
        channel.embeddedEventLoop.advanceTime(by: .seconds(120))  // the store retrying, no read asked for
        #expect(channel.isActive)
        channel.read()  // the store took the part: the server reads on, and the client says nothing
        channel.embeddedEventLoop.advanceTime(by: .seconds(6))
        #expect(!channel.isActive)
    }

    /// A request read whole and not yet answered is the server's time, however long its store takes; the client's
    /// silence counts again once the answer has ended.
    @Test func aRequestBeingAnsweredStopsTheIdleClock() throws {
        let channel = try Self.idleServer(posting: 10)
        channel.read()  // the server reads on for the next request while it answers this one
        channel.embeddedEventLoop.advanceTime(by: .seconds(120))
        #expect(channel.isActive)
        try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok)))
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        channel.embeddedEventLoop.advanceTime(by: .seconds(6))
        #expect(!channel.isActive)
    }

    @Test func framingIsJudgedByTheRequestHead() {
        func head(_ version: HTTPVersion, _ headers: [(String, String)]) -> HTTPRequestHead {
            HTTPRequestHead(version: version, method: .POST, uri: "/upload", headers: HTTPHeaders(headers))
        }
        let refusals: [(HTTPRequestHead, HTTPResponseStatus?)] = [
            (head(.http1_1, [("Transfer-Encoding", "chunked")]), nil),
            (head(.http1_1, [("Transfer-Encoding", "Chunked ")]), nil),
            (head(.http1_1, [("Content-Length", "3")]), nil),
            (head(.http1_1, [("Transfer-Encoding", "gzip, chunked")]), .notImplemented),
            (head(.http1_1, [("Transfer-Encoding", "gzip"), ("Transfer-Encoding", "chunked")]), .notImplemented),
            (head(.http1_1, [("Transfer-Encoding", "identity")]), .notImplemented),
            (head(.http1_0, [("Transfer-Encoding", "chunked")]), .badRequest),
            (head(.http1_1, [("Transfer-Encoding", "chunked"), ("Content-Length", "3")]), .badRequest),
        ]
        for (request, status) in refusals {
            #expect(FramingGuard.refusal(of: request)?.status == status, "\(request.headers)")
        }
    }

    @Test func theDescriptorLimitSizesUploadsAndConnections() {
        let descriptors = ConnectionLimit.descriptorLimit()
        let uploads = ConnectionLimit.uploadsFittingDescriptors()
        #expect(uploads == max(1, min(4096, (descriptors - 64) / 3)))
        #expect(ConnectionLimit.fittingDescriptors(uploads: uploads).limit == max(1, descriptors - 64 - uploads))
    }
}
