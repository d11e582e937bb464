import NIOCore
import NIOHTTP1

/// Joins the body parts that arrive in one read into one part, up to ``maxBytes``: over HTTP/2 each DATA frame is a
/// part of its own (16 KiB by default), where HTTP/1.1's decoder gives one part a socket read, and every part costs
/// a trip through the handlers after it, the async channel and the route's reader. A 1 GiB body over HTTP/2 was
/// 65,536 parts; joined, a part is what the stream's window let in since the route last read.
///
/// Bytes are held only until the read's end (`channelReadComplete`), the request's end, an error, the stream's
/// close, or ``maxBytes``: nothing waits for more to come.
final class BodyCoalescingHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    /// The most bytes one joined part holds.
    static let maxBytes = 1 << 20

    private var pending: ByteBuffer?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .body(var bytes) = unwrapInboundIn(data) else {
            flush(context: context)
            context.fireChannelRead(data)
            return
        }
        if pending == nil {
            pending = bytes
        } else {
            pending!.writeBuffer(&bytes)  // swift-format-ignore: NeverForceUnwrap
        }
        if (pending?.readableBytes ?? 0) >= Self.maxBytes { flush(context: context) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flush(context: context)
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        flush(context: context)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        flush(context: context)  // the bytes that came before the error, before it
        context.fireErrorCaught(error)
    }

    private func flush(context: ChannelHandlerContext) {
        guard let bytes = pending else { return }
        pending = nil
        context.fireChannelRead(wrapInboundOut(.body(bytes)))
    }
}

@available(*, unavailable)
extension BodyCoalescingHandler: Sendable {}
