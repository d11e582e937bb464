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
/// acts on the response instead. An answer not marked `Connection: close` that ends before its request's body (a
/// 404, a resumable resource's 400/409, `GET /` with a body, an upload's 200 sent at the form's close delimiter,
/// whose epilogue the parser does not read) leaves a body nobody reads: the connection stays open while at most
/// ``maxUnreadBody`` more of it arrives (Go's `net/http` discards 256 KiB), so that a client whose form ended with
/// its body keeps its connection for the next, and closes the same way past it; before this, a client pushed
/// 11–13 GB in 5 s into such a connection. It also closes, the same way, after a request NIO's parser refused, when
/// `HTTPServerProtocolErrorHandler` answered it (``HTTPServerGuards/answersUnreadableRequests``).
final class CloseAfterResponseHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private enum State {
        case open
        /// A final response with `Connection: close` is being written.
        case closingAfterResponse
        /// The answer is out and the sending side shut; reads are no longer asked for.
        case lingering(Scheduled<Void>)
    }

    /// The most bytes of a request's body that may arrive after the answer to it before the connection closes.
    static let maxUnreadBody = 256 * 1024

    /// Whether the current request's end has arrived (true between requests).
    private var requestEnded = true
    /// Whether the answer being written is final while its request's body is still coming.
    private var answeredBeforeBody = false
    /// After such an answer: the bytes of its request's body that came since, until the request ends.
    private var unreadAfterAnswer: Int?

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
            } else if head.status.code >= 200, !requestEnded {
                answeredBeforeBody = true
            }
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            guard case .closingAfterResponse = state else {
                if answeredBeforeBody, !requestEnded { unreadAfterAnswer = 0 }
                answeredBeforeBody = false
                context.write(data, promise: promise)
                return
            }
            let sent = context.eventLoop.makePromise(of: Void.self)
            sent.futureResult.cascade(to: promise)
            context.writeAndFlush(data, promise: sent)
            shutAndLinger(after: sent.futureResult, context: context)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            requestEnded = false
        case .body(let bytes):
            if let unread = unreadAfterAnswer, case .open = state {
                let total = unread + bytes.readableBytes
                unreadAfterAnswer = total
                if total > Self.maxUnreadBody {
                    // The answer is out: nothing more of this connection is worth reading.
                    state = .closingAfterResponse
                    shutAndLinger(after: context.eventLoop.makeSucceededVoidFuture(), context: context)
                }
            }
        case .end:
            requestEnded = true
            unreadAfterAnswer = nil
        }
        context.fireChannelRead(data)
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
