import NIOCore
import NIOHTTP1

/// Closes a connection whose client sends nothing for `timeout` while the server waits to read from it: between
/// requests, or in a body the server is reading. The clock runs from the server's request to read until a part
/// arrives, and stops while the server reads nothing of its own accord: a handler holding a body back (an upload
/// whose store is slow to take its parts, retrying) is not the client's idleness; nor is the time between a request
/// read whole and the end of its answer.
///
/// Hummingbird's own idle timeout counts any time without a byte read in a body, and closed an upload whose bucket
/// was retrying a part for 30 s, without a word to its client (the fault harness, `Tests/Faults`); this one answers
/// it. A write restarts the clock, as it does a client's patience.
final class ReadIdleHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart

    private let timeout: TimeAmount
    /// The close, armed while the server waits to read and nothing has come; nil while it asks for nothing, or
    /// bytes came, or it is answering a request it read whole.
    private var deadline: Scheduled<Void>?
    /// A read the server asked for that no part has answered yet.
    private var readPending = false
    /// A request read to its end whose answer has not ended: the server's time, not the client's.
    private var answering = false

    init(timeout: TimeAmount) { self.timeout = timeout }

    func read(context: ChannelHandlerContext) {
        readPending = true
        if !answering && deadline == nil { arm(context) }
        context.read()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        readPending = false
        disarm()
        if case .end = unwrapInboundIn(data) { answering = true }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { answering = false }
        disarm()
        if readPending && !answering { arm(context) }
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    private func arm(_ context: ChannelHandlerContext) {
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    private func disarm() {
        deadline?.cancel()
        deadline = nil
    }
}

@available(*, unavailable)
extension ReadIdleHandler: Sendable {}
