import NIOCore
import NIOHTTP1

/// Closes a connection whose next request head does not arrive whole within `timeout`, as nginx's
/// `client_header_timeout` does: a client that sends nothing, half a request line or half its headers holds a
/// connection and a descriptor only that long.
///
/// The clock runs from the connection's start, and again from the end of each response when no other request is
/// waiting (an idle keep-alive connection). A connection that never sent a whole request gets a 408 before it is
/// closed; an idle one between requests is closed without a word, as keep-alive timeouts do.
final class HeaderDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?
    /// Request heads received whose response has not ended.
    private var outstanding = 0
    /// Whether a whole request head has arrived on this connection yet.
    private var sawRequest = false

    init(timeout: TimeAmount) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) { disarm() }

    func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) {
            outstanding += 1
            sawRequest = true
            disarm()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let ends = if case .end = unwrapOutboundIn(data) { true } else { false }
        context.write(data, promise: promise)
        if ends {
            outstanding = max(0, outstanding - 1)
            if outstanding == 0 { arm(context) }
        }
    }

    private func arm(_ context: ChannelHandlerContext) {
        disarm()
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let idleBetweenRequests = sawRequest
        let message = "the request's headers did not arrive within \(Self.describe(timeout))"
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            guard !idleBetweenRequests else {
                bound.value.close(promise: nil)  // an idle keep-alive connection: nothing was asked
                return
            }
            GuardAnswer(status: .requestTimeout, code: "headerTimeout", message: message).send(through: bound.value)
        }
    }

    private func disarm() {
        deadline?.cancel()
        deadline = nil
    }

    static func describe(_ amount: TimeAmount) -> String {
        let milliseconds = amount.nanoseconds / 1_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
    }
}

@available(*, unavailable)
extension HeaderDeadlineHandler: Sendable {}
