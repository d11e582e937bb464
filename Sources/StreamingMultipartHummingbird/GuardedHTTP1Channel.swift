#if Hummingbird
public import HummingbirdCore
public import Logging
public import NIOCore
public import NIOHTTPTypes
import NIOHTTPTypesHTTP1
public import StreamingMultipartServer

/// Hummingbird's HTTP/1 child channel with the library's `HTTPServerGuards` (StreamingMultipartServer), placed below
/// Hummingbird's conversion to HTTPTypes, where a request's HTTP version and framing are still visible:
///
/// ```
/// socket ⇄ (past the connection limit: 503) ⇄ HTTP/1 codec ⇄ the guards (idle timeout first) ⇄ HTTPContinueHandler
///        ⇄ HTTP1ToHTTPServerCodec ⇄ HTTPConnectionStateHandler ⇄ the router
/// ```
///
/// Hummingbird's own `.http1()` adds its `additionalChannelHandlers` after that conversion, where these could not
/// work; the rest is what its `HTTP1Channel.setup` does. Made by
/// ``HummingbirdCore/HTTPServerBuilder/guardedHTTP1(guards:idleTimeout:resumableUploads:)``.
public struct GuardedHTTP1Channel: HTTPChannelHandler {
    public typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    public let responder: HTTPChannelHandler.Responder
    /// The header deadline, write timeout, linger and connection limit.
    public let guards: HTTPServerGuards
    /// A client that sends nothing this long while the server waits to read from it is closed (the guards'
    /// `idleTimeout`, unless they have one; not Hummingbird's, which counts the server's own waits).
    public let idleTimeout: Duration
    /// The uploads offered resumption; nil for none.
    public let resumableUploads: ResumableUploads?
    /// Whether the connection is TLS's (a request's scheme is then `https`).
    let secure: Bool

    /// - Parameters:
    ///   - responder: the application's responder.
    ///   - guards: the header deadline, write timeout, linger and connection limit.
    ///   - idleTimeout: nothing read or written for this long closes the connection.
    ///   - resumableUploads: the uploads offered resumption (`ResumableUploads`, StreamingMultipartServer); their
    ///     resources and routes are served around `responder`. Nil for none.
    public init(
        responder: @escaping HTTPChannelHandler.Responder, guards: HTTPServerGuards, idleTimeout: Duration,
        resumableUploads: ResumableUploads? = nil
    ) {
        self.init(
            responder: responder, guards: guards, idleTimeout: idleTimeout, resumableUploads: resumableUploads,
            secure: false)
    }

    init(
        responder: @escaping HTTPChannelHandler.Responder, guards: HTTPServerGuards, idleTimeout: Duration,
        resumableUploads: ResumableUploads?, secure: Bool
    ) {
        self.secure = secure
        self.responder = resumableUploads.map { $0.responder(wrapping: responder) } ?? responder
        self.guards = guards
        self.idleTimeout = idleTimeout
        self.resumableUploads = resumableUploads
    }

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            // The idle timeout is the guards', which stops while a route holds a body back (an upload waiting for
            // its store); Hummingbird's would close that upload without an answer.
            var guards = guards
            guards.idleTimeout = guards.idleTimeout ?? .nanoseconds(Int64(idleTimeout / .nanoseconds(1)))
            try pipeline.configureGuardedHTTPServerPipeline(guards: guards, resumableUploads: resumableUploads)
            try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: secure))
            try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: nil, logger: logger))
            return try NIOAsyncChannel(
                wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
        }
    }

    public func handle(value: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 with the guards every upload server needs, in one line:
    ///
    /// ```swift
    /// let app = Application(router: router, server: .guardedHTTP1())
    /// ```
    ///
    /// The defaults: a request head within 10 s (else 408), writes that stall 10 s close the connection, an answer
    /// with `Connection: close` (every refusal of this library's) shuts the connection without reading the rest of
    /// the body, connections past what the process's descriptors hold get 503 at once, `Expect: 100-continue`
    /// answered in order, framing that two parsers could read apart refused (400, 501), and a connection idle for
    /// 60 s closed: longer than the spooler's body rule takes at its default (500 B/s over 20 s windows: a body that
    /// stops is answered 408 within 40 s), so that a stalled upload gets its answer. Hummingbird answers the requests
    /// NIO's parser cannot read.
    ///
    /// - Parameters:
    ///   - guards: the header deadline, write timeout, linger and connection limit (`HTTPServerGuards`).
    ///   - idleTimeout: nothing read or written for this long closes the connection.
    ///   - resumableUploads: the uploads offered resumption (draft-ietf-httpbis-resumable-upload): a client whose
    ///     connection drops sends only the rest, and the route reads one body (`ResumableUploads`,
    ///     StreamingMultipartServer). Nil (the default) for none.
    public static func guardedHTTP1(
        guards: HTTPServerGuards = HTTPServerGuards(
            connections: .fittingDescriptors(uploads: ConnectionLimit.uploadsFittingDescriptors()),
            answersUnreadableRequests: false),
        idleTimeout: Duration = .seconds(60), resumableUploads: ResumableUploads? = nil
    ) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            GuardedHTTP1Channel(
                responder: responder, guards: guards, idleTimeout: idleTimeout, resumableUploads: resumableUploads)
        }
    }
}
#endif
