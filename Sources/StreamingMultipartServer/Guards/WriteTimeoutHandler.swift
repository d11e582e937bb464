import NIOCore

/// Closes a connection whose writes make no progress for `timeout`: a client that never reads its answer leaves
/// the answer in the server's memory for only that long.
///
/// NIO marks a channel unwritable when more than its high-water mark (64 KiB by default) is waiting to go out; the
/// clock runs while it stays so, and stops when the client reads enough to make it writable again.
final class WriteTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount) { self.timeout = timeout }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        if !context.channel.isWritable {
            let channel = context.channel
            deadline = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }
}

@available(*, unavailable)
extension WriteTimeoutHandler: Sendable {}
