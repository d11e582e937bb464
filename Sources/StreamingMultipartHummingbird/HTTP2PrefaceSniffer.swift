#if Hummingbird
import NIOCore
import NIOTLS

/// Tells HTTP/2 with prior knowledge (h2c) from HTTP/1.1 on a plain-text connection by its first bytes, as
/// ALPN tells them apart over TLS: a connection that opens with HTTP/2's 24-byte preface
/// (`PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`, RFC 9113 §3.4) is HTTP/2, one whose bytes part from it at any point is
/// HTTP/1.1 (no HTTP/1.1 method is `PRI`).
///
/// It says so as TLS would, with `TLSUserEvent.handshakeCompleted(negotiatedProtocol:)`, so that one negotiation
/// handler serves both; then passes on the bytes it held and leaves the pipeline. It holds at most 24 bytes; the
/// deadline for them is ``NegotiationDeadlineHandler``'s.
final class HTTP2PrefaceSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    private var held: ByteBuffer?
    private var decided = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !decided else {
            context.fireChannelRead(data)
            return
        }
        var bytes = unwrapInboundIn(data)
        if var held = self.held {
            held.writeBuffer(&bytes)
            bytes = held
        }
        let seen = bytes.readableBytesView.prefix(Self.preface.count)
        if !seen.elementsEqual(Self.preface.prefix(seen.count)) {
            decide(context: context, protocol: "http/1.1", holding: bytes)
        } else if seen.count == Self.preface.count {
            decide(context: context, protocol: "h2", holding: bytes)
        } else {
            held = bytes  // a prefix of the preface so far
        }
    }

    private func decide(context: ChannelHandlerContext, protocol name: String, holding bytes: ByteBuffer) {
        decided = true
        held = nil
        context.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: name))
        context.fireChannelRead(wrapInboundOut(bytes))
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

@available(*, unavailable)
extension HTTP2PrefaceSniffer: Sendable {}
#endif
