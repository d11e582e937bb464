#if Hummingbird
import NIOCore
import NIOHTTP2

/// What an HTTP/2 connection's own handler leaves to the server, after NIO's HTTP/2 handler:
///
/// - **The close after a connection error.** NIO answers a flood or a protocol error with a GOAWAY and stops the
///   connection's streams, but leaves the connection open: here the sending side is shut once it is out, nothing
///   more is read, and the connection is closed `linger` later (closed at once, the unread flood in the socket
///   would reset it and could take the GOAWAY with it).
/// - **The header deadline.** A connection with no stream open gets a GOAWAY and is closed `timeout` after its start
///   or its last stream's end, as HTTP/1.1's `HeaderDeadlineHandler` closes a connection whose next request head
///   does not come, and as nginx and Go close an idle HTTP/2 connection. A stream's head comes whole in one header
///   block (NIO holds at most five CONTINUATION frames and the header list's bound of it), so a stream open is a
///   request head read.
/// - **The end of the client's input** (Hummingbird allows half-closed connections, and NIO's HTTP/2 handler does
///   not close on it): closed once its open streams have ended.
/// - **A graceful shutdown** (`ChannelShouldQuiesceEvent`): a GOAWAY naming the last stream taken at once, and the
///   close once the open streams have ended.
///
/// It counts streams through NIO's stream delegate (``delegate``, given to the HTTP/2 pipeline) and sits after
/// NIO's HTTP/2 handler, where it writes the GOAWAY.
final class HTTP2ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// Tells the guard of streams opening and closing, on its event loop.
    struct Delegate: NIOHTTP2StreamDelegate {
        let handler: NIOLoopBound<HTTP2ConnectionGuard>

        func streamCreated(_ id: HTTP2StreamID, channel: any Channel) { handler.value.opened(id) }
        func streamClosed(_ id: HTTP2StreamID, channel: any Channel) { handler.value.closed() }
    }

    private enum State {
        /// Serving; with no stream open, the header deadline runs.
        case serving
        /// The client's input has ended, or the server is shutting down: closed when the last stream ends.
        case ending
        /// A connection error was answered: reads have stopped, the close is scheduled.
        case closing
    }

    private let timeout: TimeAmount
    private let linger: TimeAmount
    private var state = State.serving
    private var context: ChannelHandlerContext?
    private var openStreams = 0
    private var lastStream = HTTP2StreamID.rootStream
    /// The header deadline while serving; the close's linger while closing.
    private var deadline: Scheduled<Void>?
    let eventLoop: any EventLoop

    init(timeout: TimeAmount, linger: TimeAmount, eventLoop: any EventLoop) {
        self.timeout = timeout
        self.linger = linger
        self.eventLoop = eventLoop
    }

    var delegate: Delegate { Delegate(handler: NIOLoopBound(self, eventLoop: eventLoop)) }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if openStreams == 0 { startDeadline() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        self.context = nil
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if case .closing = state {
        } else {
            state = .closing
            deadline?.cancel()
            let (channel, linger) = (context.channel, self.linger)
            context.flush()
            channel.close(mode: .output, promise: nil)
            deadline = context.eventLoop.scheduleTask(in: linger) { channel.close(promise: nil) }
        }
        context.fireErrorCaught(error)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed = event as? ChannelEvent {
            end(goingAway: false)
        } else if event is ChannelShouldQuiesceEvent {
            end(goingAway: true)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func read(context: ChannelHandlerContext) {
        if case .closing = state { return }  // after a connection error, nothing more of the flood is read
        context.read()
    }

    private func opened(_ id: HTTP2StreamID) {
        openStreams += 1
        lastStream = max(lastStream, id)
        deadline?.cancel()
        deadline = nil
    }

    private func closed() {
        openStreams -= 1
        guard openStreams == 0 else { return }
        switch state {
        case .serving: startDeadline()
        case .ending: context?.close(promise: nil)
        case .closing: break
        }
    }

    /// No new streams: now if none is open, else when the last ends; with `goingAway`, the client is told first.
    private func end(goingAway: Bool) {
        guard case .serving = state, let context else { return }
        state = .ending
        deadline?.cancel()
        deadline = nil
        if goingAway { context.writeAndFlush(wrapOutboundOut(goAwayFrame), promise: nil) }
        if openStreams == 0 { context.close(promise: nil) }
    }

    private func startDeadline() {
        guard let context else { return }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: timeout) { bound.value.goAway() }
    }

    private var goAwayFrame: HTTP2Frame {
        HTTP2Frame(
            streamID: .rootStream, payload: .goAway(lastStreamID: lastStream, errorCode: .noError, opaqueData: nil))
    }

    /// At the header deadline: GOAWAY with the last stream the server took, then the close once it is out.
    private func goAway() {
        guard let context, openStreams == 0, case .serving = state else { return }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(goAwayFrame)).whenComplete { _ in channel.close(promise: nil) }
    }
}

@available(*, unavailable)
extension HTTP2ConnectionGuard: Sendable {}
#endif
