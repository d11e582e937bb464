import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import UploadServer

/// The server's connection guards on an embedded channel, its clock moved by hand: the write timeout, the header
/// deadline and the framing rules, without a socket or a wall clock.
@Suite struct ConnectionGuardTests {
    @Test func aConnectionWhoseWritesMakeNoProgressIsClosedAfterTheTimeout() throws {
        let channel = EmbeddedChannel(handler: WriteTimeoutHandler(timeout: .seconds(10)))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        channel.isWritable = false  // the client reads nothing: NIO marks the channel unwritable
        channel.pipeline.fireChannelWritabilityChanged()
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
    }

    @Test func writesThatProgressAgainStopTheClock() throws {
        let channel = EmbeddedChannel(handler: WriteTimeoutHandler(timeout: .seconds(10)))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        channel.isWritable = false
        channel.pipeline.fireChannelWritabilityChanged()
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        channel.isWritable = true  // the client read some
        channel.pipeline.fireChannelWritabilityChanged()
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        #expect(channel.isActive)
    }

    /// A server pipeline of the HTTP/1 codec and the guards, as `GuardedHTTP1Channel` makes it.
    static func guarded(headerTimeout: TimeAmount) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.configureHTTPServerPipeline(
            withPipeliningAssistance: false, withErrorHandling: false)
        try channel.pipeline.syncOperations.addHandlers([
            CloseAfterResponseHandler(), HeaderDeadlineHandler(timeout: headerTimeout), FramingGuard(),
        ])
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    static func sent(_ channel: EmbeddedChannel) throws -> String {
        var text = ""
        while var buffer = try channel.readOutbound(as: ByteBuffer.self) {
            text += buffer.readString(length: buffer.readableBytes) ?? ""
        }
        return text
    }

    @Test func halfARequestHeadIsAnswered408AndClosedAtTheDeadline() throws {
        let channel = try Self.guarded(headerTimeout: .seconds(10))
        try channel.writeInbound(ByteBuffer(string: "POST /upload HTTP/1.1\r\nHost: x\r\nContent-"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(try Self.sent(channel) == "")
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        let answer = try Self.sent(channel)
        #expect(answer.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"), "\(answer)")
        #expect(answer.contains("connection: close") && answer.contains("headerTimeout"), "\(answer)")
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))  // past the 500 ms linger
        #expect(!channel.isActive)
    }

    @Test func aWholeHeadInTimeStopsTheDeadline() throws {
        let channel = try Self.guarded(headerTimeout: .seconds(10))
        try channel.writeInbound(ByteBuffer(string: "GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        #expect(channel.isActive)
        #expect(try Self.sent(channel) == "")
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
}
