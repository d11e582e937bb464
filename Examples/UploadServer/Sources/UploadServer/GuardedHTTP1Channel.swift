import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import StreamingMultipartNIO

/// Hummingbird's HTTP/1 child channel with the guards an upload server needs, placed below Hummingbird's
/// conversion to HTTPTypes, where a request's HTTP version and framing are still visible:
///
/// ```
/// socket ⇄ HTTP/1 codec ⇄ WriteTimeout ⇄ CloseAfterResponse ⇄ HeaderDeadline ⇄ FramingGuard ⇄ HTTPContinueHandler
///        ⇄ HTTP1ToHTTPServerCodec ⇄ HTTPConnectionStateHandler (idle timeout) ⇄ the router
/// ```
///
/// Hummingbird's own `.http1()` adds its `additionalChannelHandlers` after that conversion, where these could not
/// work; the rest is what `HTTP1Channel.setup` does. A connection past the connection limit gets a
/// ``RefusedConnectionHandler`` first instead, which answers 503 and closes it.
struct GuardedHTTP1Channel: HTTPChannelHandler {
    typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    /// The connection timeouts (the body's own rule is the spooler's).
    struct Timeouts: Sendable {
        /// A request head must arrive whole within this, from the connection's start or the previous response's end.
        var header: TimeAmount
        /// Nothing read or written for this long closes the connection (Hummingbird's idle timeout).
        var idle: Duration
        /// Writes that make no progress for this long close the connection.
        var write: TimeAmount
    }

    let responder: HTTPChannelHandler.Responder
    let timeouts: Timeouts
    /// The connection limit (see ``ConnectionLimit``).
    let connections: Slots

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            if connections.take() {
                let limit = connections
                channel.closeFuture.whenComplete { _ in limit.give() }
            } else {
                try pipeline.addHandler(RefusedConnectionHandler())  // answered 503 and closed, nothing read
            }
            try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: false)
            try pipeline.addHandlers([
                // The guards' own answers pass the handlers nearer the socket: CloseAfterResponse closes after them.
                WriteTimeoutHandler(timeout: timeouts.write), CloseAfterResponseHandler(),
                HeaderDeadlineHandler(timeout: timeouts.header), FramingGuard(), HTTPContinueHandler(),
            ])
            try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
            try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: timeouts.idle, logger: logger))
            return try NIOAsyncChannel(
                wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
        }
    }

    func handle(value: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: value, logger: logger)
    }
}
