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
/// acts on the response instead. It also closes, the same way, after a request NIO's parser refused, when
/// `HTTPServerProtocolErrorHandler` answered it (``HTTPServerGuards/answersUnreadableRequests``).
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
    /// Whether a request NIO's parser refused (answered 400 by `HTTPServerProtocolErrorHandler`, nearer the socket)
    /// closes the connection the same way.
    private let closesAfterParserErrors: Bool
    private var state = State.open

    init(linger: TimeAmount = .milliseconds(500), closesAfterParserErrors: Bool = false) {
        self.linger = linger
        self.closesAfterParserErrors = closesAfterParserErrors
    }

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
            let sent = context.eventLoop.makePromise(of: Void.self)
            sent.futureResult.cascade(to: promise)
            context.writeAndFlush(data, promise: sent)
            shutAndLinger(after: sent.futureResult, context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if closesAfterParserErrors, error is HTTPParserError, case .open = state {
            state = .closingAfterResponse
            shutAndLinger(after: context.eventLoop.makeSucceededVoidFuture(), context: context)
        }
        context.fireErrorCaught(error)
    }

    /// Once `sent` completes: the sending side shut, and the connection closed `linger` later.
    private func shutAndLinger(after sent: EventLoopFuture<Void>, context: ChannelHandlerContext) {
        let channel = context.channel
        let lingerFor = linger
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        sent.whenComplete { _ in
            channel.close(mode: .output, promise: nil)
            let close = channel.eventLoop.scheduleTask(in: lingerFor) { channel.close(promise: nil) }
            bound.value.state = .lingering(close)
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
