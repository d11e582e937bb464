import NIOCore
import NIOHTTP1

/// Makes an HTTP/2 stream that closes before its request's end an error for the handlers after it, as a connection
/// lost mid-body is over HTTP/1.1 (NIO's decoder says so): a stream reset by the client, or its connection lost,
/// ends without an `.end`, and its `NIOAsyncChannel` would end the body quietly, so that a route took a body cut
/// short for a whole one, and a resumable upload was answered instead of paused for the client to resume.
final class StreamEndHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    /// The error the handlers after it see.
    struct CutOff: Error, CustomStringConvertible {
        var description: String { "the stream closed before its request's end (reset, or its connection lost)" }
    }

    /// Whether a request's head came and its end not yet.
    private var inRequest = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: inRequest = true
        case .body: break
        case .end: inRequest = false
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if inRequest {
            inRequest = false
            context.fireErrorCaught(CutOff())
        }
        context.fireChannelInactive()
    }
}

@available(*, unavailable)
extension StreamEndHandler: Sendable {}
