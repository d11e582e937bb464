#if Hummingbird
public import HummingbirdCore
public import Logging
public import NIOCore
public import NIOHTTP2
public import NIOHTTPTypes
import NIOHTTPTypesHTTP1
public import NIOSSL
import NIOTLS
public import StreamingMultipartServer

/// Hummingbird's child channel for HTTP/2 and HTTP/1.1 on one port, with the library's guards on each HTTP/1.1
/// connection and each HTTP/2 stream:
///
/// ```
/// socket ⇄ (past the connection limit: closed) ⇄ TLS, ALPN h2 or http/1.1   (or, without TLS: the first bytes,
///        ⇄ HTTP/2's preface for h2c with prior knowledge, else HTTP/1.1) ⇄ a deadline for either
///   h2:       ⇄ write timeout ⇄ NIO's HTTP/2 handler (HTTP2Limits) ⇄ close after its GOAWAYs, idle deadline ⇄ per stream:
///             HTTP/2 → HTTP/1 parts ⇄ idle, write timeout, reset after a refusal, 100/104 ⇄ HTTPTypes ⇄ the router
///   http/1.1: GuardedHTTP1Channel's pipeline
/// ```
///
/// Made by ``HummingbirdCore/HTTPServerBuilder/guardedHTTP2(tls:guards:http2:idleTimeout:resumableUploads:)``.
public struct GuardedHTTP2Channel: HTTPChannelHandler {
    public typealias Stream = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>
    public typealias Connection = NIOHTTP2Handler.AsyncStreamMultiplexer<Stream>

    /// A connection once its protocol is known.
    public struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<NIONegotiatedHTTPVersion<GuardedHTTP1Channel.Value, Connection>>
        public let channel: any Channel
    }

    public let responder: HTTPChannelHandler.Responder
    /// HTTP/1.1's connections, with the same guards and responder.
    private let http1: GuardedHTTP1Channel
    /// The TLS context, with ALPN `h2` and `http/1.1`; nil for plain text (h2c with prior knowledge, or HTTP/1.1).
    private let tls: NIOSSLContext?
    /// The guards; their connection limit counts connections of either protocol.
    public let guards: HTTPServerGuards
    /// What one HTTP/2 connection may ask of the server.
    public let http2: HTTP2Limits
    public let resumableUploads: ResumableUploads?

    /// - Parameters:
    ///   - responder: the application's responder.
    ///   - tls: the server's certificate and key (its `applicationProtocols` are set to `h2`, `http/1.1`); nil for
    ///     plain text behind a proxy: HTTP/2 with prior knowledge (h2c) and HTTP/1.1, told apart by the first bytes.
    ///   - guards: the header deadline, write timeout, linger and connection limit, as over HTTP/1.1.
    ///   - http2: what one HTTP/2 connection may ask of the server.
    ///   - idleTimeout: the guards' idle timeout, unless they have one.
    ///   - resumableUploads: the uploads offered resumption, over either protocol; nil for none.
    public init(
        responder: @escaping HTTPChannelHandler.Responder, tls: TLSConfiguration?, guards: HTTPServerGuards,
        http2: HTTP2Limits = HTTP2Limits(), idleTimeout: Duration = .seconds(60),
        resumableUploads: ResumableUploads? = nil
    ) throws {
        self.init(
            responder: responder, tls: try Self.context(tls), guards: guards, http2: http2, idleTimeout: idleTimeout,
            resumableUploads: resumableUploads)
    }

    init(
        responder: @escaping HTTPChannelHandler.Responder, tls: NIOSSLContext?, guards: HTTPServerGuards,
        http2: HTTP2Limits, idleTimeout: Duration, resumableUploads: ResumableUploads?
    ) {
        var guards = guards
        guards.idleTimeout = guards.idleTimeout ?? .nanoseconds(Int64(idleTimeout / .nanoseconds(1)))
        var withoutLimit = guards
        withoutLimit.connections = nil  // taken once for the connection, by setup below
        self.http1 = GuardedHTTP1Channel(
            responder: responder, guards: withoutLimit, idleTimeout: idleTimeout, resumableUploads: resumableUploads,
            secure: tls != nil)
        self.responder = self.http1.responder
        self.tls = tls
        self.guards = guards
        self.http2 = http2
        self.resumableUploads = resumableUploads
    }

    /// The TLS context of `configuration`, offering `h2` and `http/1.1` by ALPN.
    static func context(_ configuration: TLSConfiguration?) throws -> NIOSSLContext? {
        guard var configuration else { return nil }
        configuration.applicationProtocols = NIOHTTP2SupportedALPNProtocols
        return try NIOSSLContext(configuration: configuration)
    }

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.configureConnectionLimit(guards.connections, answers: tls == nil)
            if let tls {
                try pipeline.addHandler(NIOSSLServerHandler(context: tls))
            } else {
                try pipeline.addHandler(HTTP2PrefaceSniffer())
            }
            try pipeline.addHandler(NegotiationDeadlineHandler(timeout: guards.headerTimeout))
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return channel.configureHTTP2AsyncSecureUpgrade { channel in
            http1.setup(channel: channel, logger: logger)
        } http2ConnectionInitializer: { channel in
            channel.eventLoop.makeCompletedFuture { try setUpHTTP2(channel: channel, logger: logger) }
        }.map { Value(negotiated: $0, channel: channel) }
    }

    /// The HTTP/2 connection's pipeline: its write timeout, NIO's handler with ``HTTP2Limits``, the connection's guard,
    /// and each stream's guards.
    private func setUpHTTP2(channel: any Channel, logger: Logger) throws -> Connection {
        let pipeline = channel.pipeline.syncOperations
        try pipeline.configureWriteTimeout(guards.writeTimeout)
        let connectionGuard = HTTP2ConnectionGuard(
            timeout: guards.headerTimeout, linger: guards.linger, eventLoop: channel.eventLoop)
        let (guards, resumableUploads, secure) = (self.guards, self.resumableUploads, tls != nil)
        let connection = try pipeline.configureAsyncHTTP2Pipeline(
            mode: .server, streamDelegate: connectionGuard.delegate, configuration: http2.configuration
        ) { stream in
            stream.eventLoop.makeCompletedFuture {
                let pipeline = stream.pipeline.syncOperations
                try pipeline.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                try pipeline.configureGuardedHTTPStream(guards: guards, resumableUploads: resumableUploads)
                try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: secure))
                return try Stream(wrappingChannelSynchronously: stream)
            }
        }
        try pipeline.addHandler(connectionGuard)
        return connection
    }

    public func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.negotiated.get() {
            case .http1_1(let connection):
                await http1.handle(value: connection, logger: logger)
            case .http2(let connection):
                // Each stream is one request. The connection's end, even by an error, cancels none of them: a
                // resumable upload's route goes on, its body paused, for the client's next connection.
                await withDiscardingTaskGroup { group in
                    do {
                        for try await stream in connection.inbound {
                            group.addTask { await handleHTTP(asyncChannel: stream, logger: logger) }
                        }
                    } catch {
                        logger.debug("An HTTP/2 connection ended: \(error)")
                    }
                }
            }
        } catch {
            logger.debug("A connection ended before or while it was served: \(error)")
        }
    }
}

extension HTTPServerBuilder {
    /// HTTP/2 and HTTP/1.1 on one port, with the guards of ``guardedHTTP1(guards:idleTimeout:resumableUploads:)``
    /// on every HTTP/1.1 connection and every HTTP/2 stream:
    ///
    /// ```swift
    /// let tls = TLSConfiguration.makeServerConfiguration(
    ///     certificateChain: try NIOSSLCertificate.fromPEMFile("cert.pem").map { .certificate($0) },
    ///     privateKey: .privateKey(try NIOSSLPrivateKey(file: "key.pem", format: .pem)))
    /// let app = Application(router: router, server: try .guardedHTTP2(tls: tls))
    /// ```
    ///
    /// With TLS, ALPN picks `h2` or `http/1.1`; without (`tls: nil`, behind a proxy that ends TLS), a connection
    /// that opens with HTTP/2's preface is HTTP/2 with prior knowledge (h2c), and any other is HTTP/1.1. Over
    /// HTTP/2, each stream has the idle and write timeouts, the reset after a refusal and `100 Continue` / `104`
    /// with resumable uploads; the connection has the limit, its own write timeout, a deadline for its first stream
    /// and between streams (a GOAWAY, as nginx and Go close an idle connection), and ``HTTP2Limits``: the bounds on
    /// streams, header lists, windows and the floods of frames (rapid reset, CONTINUATION, SETTINGS, PING, empty
    /// DATA), each answered with a GOAWAY.
    ///
    /// - Parameters:
    ///   - tls: the server's certificate and key; nil for plain text (h2c with prior knowledge, and HTTP/1.1).
    ///   - guards: the header deadline, write timeout, linger and connection limit (`HTTPServerGuards`); a TLS
    ///     connection past the limit is closed without an answer.
    ///   - http2: what one HTTP/2 connection may ask of the server.
    ///   - idleTimeout: nothing read or written for this long closes an HTTP/1.1 connection or an HTTP/2 stream.
    ///   - resumableUploads: the uploads offered resumption, over either protocol; nil for none.
    public static func guardedHTTP2(
        tls: TLSConfiguration?,
        guards: HTTPServerGuards = HTTPServerGuards(
            connections: .fittingDescriptors(uploads: ConnectionLimit.uploadsFittingDescriptors()),
            answersUnreadableRequests: false),
        http2: HTTP2Limits = HTTP2Limits(), idleTimeout: Duration = .seconds(60),
        resumableUploads: ResumableUploads? = nil
    ) throws -> HTTPServerBuilder {
        let context = try GuardedHTTP2Channel.context(tls)  // a certificate that does not load fails here
        return HTTPServerBuilder { responder in
            GuardedHTTP2Channel(
                responder: responder, tls: context, guards: guards, http2: http2, idleTimeout: idleTimeout,
                resumableUploads: resumableUploads)
        }
    }
}
#endif
