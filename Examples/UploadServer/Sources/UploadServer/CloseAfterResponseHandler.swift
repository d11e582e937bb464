import NIOCore
import NIOHTTP1

/// Closes the connection once a response that says `Connection: close` is sent, so that the server stops reading
/// the request: after a refusal (413, 415, 503) or an upload's answer, the rest of the body a client sends is never
/// read (it used to be: another gigabyte in 3 s after a 413), as Go's `net/http` closes past a limit.
///
/// The close is the one Go's server makes: the answer is flushed, the sending side shut (FIN), no more is read, and
/// the connection closed `linger` later (or when the client closes first). Closed at once, a client still sending
/// would get a reset that makes its kernel drop the answer before the client reads it.
///
/// Hummingbird drains an unread body before the next request unless the *request* said `Connection: close`; this
/// acts on the response instead.
final class CloseAfterResponseHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private enum State {
        case open
        /// A final response with `Connection: close` is being written.
        case closingAfterResponse
        /// The answer is out and the sending side shut; reads are no longer asked for.
        case lingering(Scheduled<Void>)
    }

    private let linger: TimeAmount
    private var state = State.open

    init(linger: TimeAmount = .milliseconds(500)) { self.linger = linger }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            if head.status.code >= 200, head.headers["connection"].contains(where: { $0.lowercased() == "close" }) {
                state = .closingAfterResponse
            }
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            guard case .closingAfterResponse = state else {
                context.write(data, promise: promise)
                return
            }
            let channel = context.channel
            let lingerFor = linger
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            let sent = context.eventLoop.makePromise(of: Void.self)
            sent.futureResult.cascade(to: promise)
            context.writeAndFlush(data, promise: sent)
            sent.futureResult.whenComplete { _ in
                channel.close(mode: .output, promise: nil)
                let close = channel.eventLoop.scheduleTask(in: lingerFor) { channel.close(promise: nil) }
                bound.value.state = .lingering(close)
            }
        }
    }

    func read(context: ChannelHandlerContext) {
        if case .lingering = state { return }  // the rest of the request is not read
        context.read()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .lingering(let close) = state { close.cancel() }
        context.fireChannelInactive()
    }
}

@available(*, unavailable)
extension CloseAfterResponseHandler: Sendable {}
