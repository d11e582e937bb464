#if Hummingbird
import NIOCore
import NIOTLS

/// Closes a connection whose protocol is not known within `timeout` of its start: a TLS handshake that never ends,
/// or plain-text first bytes that never tell HTTP/2 from HTTP/1.1. Once `TLSUserEvent.handshakeCompleted` passes
/// (from TLS or ``HTTP2PrefaceSniffer``), it leaves the pipeline, and the chosen protocol's own deadlines take over.
/// Before that, the end of the client's input or a graceful shutdown closes the connection at once.
final class NegotiationDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent {
            context.fireUserInboundEventTriggered(event)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        } else if case .inputClosed = event as? ChannelEvent {
            context.close(promise: nil)
        } else if event is ChannelShouldQuiesceEvent {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}

@available(*, unavailable)
extension NegotiationDeadlineHandler: Sendable {}
#endif
