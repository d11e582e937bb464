import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import StreamingMultipartNIO

/// Hummingbird's HTTP/1 child channel with the library's `HTTPServerGuards` (StreamingMultipartNIO), placed below
/// Hummingbird's conversion to HTTPTypes, where a request's HTTP version and framing are still visible:
///
/// ```
/// socket ⇄ (past the connection limit: 503) ⇄ HTTP/1 codec ⇄ the guards ⇄ HTTPContinueHandler
///        ⇄ HTTP1ToHTTPServerCodec ⇄ HTTPConnectionStateHandler (idle timeout) ⇄ the router
/// ```
///
/// Hummingbird's own `.http1()` adds its `additionalChannelHandlers` after that conversion, where these could not
/// work; the rest is what `HTTP1Channel.setup` does.
struct GuardedHTTP1Channel: HTTPChannelHandler {
    typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    let responder: HTTPChannelHandler.Responder
    /// The header deadline, write timeout, linger and connection limit.
    let guards: HTTPServerGuards
    /// Nothing read or written for this long closes the connection (Hummingbird's idle timeout).
    let idleTimeout: Duration

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.configureGuardedHTTPServerPipeline(guards: guards)
            try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
            try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: idleTimeout, logger: logger))
            return try NIOAsyncChannel(
                wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
        }
    }

    func handle(value: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: value, logger: logger)
    }
}
