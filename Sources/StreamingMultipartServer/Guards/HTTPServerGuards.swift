public import NIOCore
import NIOHTTP1

/// The guards every HTTP/1 upload server needs on each connection, for any server built on NIO's HTTP/1 codec:
/// what a hostile client does before a request reaches a handler, the handlers cannot stop.
///
/// ``NIOCore/ChannelPipeline/SynchronousOperations/configureGuardedHTTPServerPipeline(guards:resumableUploads:)``
/// installs them with NIO's HTTP/1 server codec, in this order:
///
/// ```
/// socket ⇄ (past the connection limit: a 503, and nothing read) ⇄ HTTP/1 codec ⇄ idle timeout ⇄ write timeout
///        ⇄ close after `Connection: close` ⇄ header deadline ⇄ framing checks ⇄ HTTPContinueHandler ⇄ your handlers
/// ```
///
/// - **Connection limit** (``connections``): past it, a connection is answered `503` with `Retry-After` as soon as
///   it opens, and closed; `accept` never runs out of descriptors (see ``ConnectionLimit``).
/// - **Idle timeout** (``idleTimeout``, off by default): a client that sends nothing this long while the server waits
///   to read (between requests, in a body) is closed; not while the server holds a body back itself, nor while it
///   answers a request it read whole.
/// - **Write timeout** (``writeTimeout``): writes that make no progress this long close the connection, so a client
///   that never reads its answer leaves it in memory that long only.
/// - **Close after `Connection: close`** (``linger``): once a final response that says `Connection: close` is sent,
///   the sending side is shut, nothing more is read, and the connection is closed `linger` later: after a refusal
///   (413, 415, 503) the rest of the body is never read, and the client still reads the answer (no reset).
/// - **Header deadline** (``headerTimeout``): a request head must arrive whole within this, from the connection's
///   start or the end of the previous response, as nginx's `client_header_timeout`; else `408` and a close (an idle
///   keep-alive connection is closed without a word).
/// - **Framing** (RFC 9112 §6.1, §6.3): a transfer coding other than `chunked` alone (501), `Transfer-Encoding` in
///   HTTP/1.0 (400), `Transfer-Encoding` beside `Content-Length` (400: NIO's parser refuses the pair itself, and
///   ``answersUnreadableRequests`` answers it), each answered and closed.
/// - **`Expect: 100-continue`**, answered in order (``HTTPContinueHandler``).
///
/// A server answers its own errors with `Connection: close` to have the connection closed after them. The guards'
/// own answers are JSON, `{"error":{"code","message"}}`. What they leave to the server: the body's own rate and size (`MultipartSpooler`'s limits),
/// and which uploads run at once (``UploadAdmission``).
///
/// On Hummingbird 2 they go in a child channel below its conversion to HTTPTypes: `StreamingMultipartHummingbird`'s
/// `.guardedHTTP1()` installs them there (Hummingbird's `additionalChannelHandlers` come after that conversion,
/// where these cannot work). Vapor 4 has no place for a
/// channel handler of one's own: put nginx in front (`Examples/VaporUpload/Deploy/upload-guards.conf` does each of
/// these there).
public struct HTTPServerGuards: Sendable {
    /// A request head must arrive whole within this. Default 10 s.
    public var headerTimeout: TimeAmount
    /// Writes that make no progress this long close the connection. Default 10 s.
    public var writeTimeout: TimeAmount
    /// How long a connection is kept, its sending side shut, after an answer with `Connection: close`. Default
    /// 500 ms.
    public var linger: TimeAmount
    /// The connections open at once, shared by every connection of the server; nil for no limit.
    public var connections: ConnectionLimit?
    /// A client that sends nothing this long while the server waits to read from it (between requests, or in a body
    /// being read) has its connection closed; the clock stops while the server holds a body back of its own accord
    /// (an upload waiting for a slow store). Nil (the default) for none: a framework's own idle timeout then, which
    /// counts the server's waits too.
    public var idleTimeout: TimeAmount?
    /// Whether a request NIO's HTTP/1 parser cannot read (`Content-Length` beside `Transfer-Encoding`, a malformed
    /// head) is answered `400` and closed, by NIO's `HTTPServerProtocolErrorHandler`. Default true; turn it off where
    /// the framework answers parser errors itself (Hummingbird 2 does).
    public var answersUnreadableRequests: Bool

    public init(
        headerTimeout: TimeAmount = .seconds(10), writeTimeout: TimeAmount = .seconds(10),
        linger: TimeAmount = .milliseconds(500), connections: ConnectionLimit? = nil,
        answersUnreadableRequests: Bool = true, idleTimeout: TimeAmount? = nil
    ) {
        self.idleTimeout = idleTimeout
        self.headerTimeout = headerTimeout
        self.writeTimeout = writeTimeout
        self.linger = linger
        self.connections = connections
        self.answersUnreadableRequests = answersUnreadableRequests
    }
}

extension ChannelPipeline.SynchronousOperations {
    /// NIO's HTTP/1 server pipeline with ``HTTPServerGuards`` installed: call it from a child channel initializer,
    /// on the channel's event loop, and add your handlers after it.
    ///
    /// ```swift
    /// let guards = HTTPServerGuards(connections: ConnectionLimit(limit: 1000))
    /// ServerBootstrap(group: group).childChannelInitializer { channel in
    ///     channel.eventLoop.makeCompletedFuture {
    ///         try channel.pipeline.syncOperations.configureGuardedHTTPServerPipeline(guards: guards)
    ///         try channel.pipeline.syncOperations.addHandler(MyUploadHandler())
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - guards: the header deadline, write timeout, linger and connection limit.
    ///   - resumableUploads: the uploads whose creation requests are offered resumption (`104`, see
    ///     ``ResumableUploads``); the responder then serves them. Nil (the default) for none.
    public func configureGuardedHTTPServerPipeline(
        guards: HTTPServerGuards, resumableUploads: ResumableUploads? = nil
    ) throws {
        try configureConnectionLimit(guards.connections)
        try configureHTTPServerPipeline(
            withPipeliningAssistance: false, withErrorHandling: guards.answersUnreadableRequests)
        if let idleTimeout = guards.idleTimeout {
            try addHandler(ReadIdleHandler(timeout: idleTimeout))  // sees each part come, and each answer end
        }
        try addHandlers([
            // The guards' own answers pass the handlers nearer the socket: CloseAfterResponse closes after them.
            WriteTimeoutHandler(timeout: guards.writeTimeout),
            CloseAfterResponseHandler(linger: guards.linger, closesAfterParserErrors: guards.answersUnreadableRequests),
            HeaderDeadlineHandler(timeout: guards.headerTimeout), FramingGuard(),
            HTTPContinueHandler(resumableUploads: resumableUploads),
        ])
    }
}

extension ChannelPipeline.SynchronousOperations {
    /// The connection limit's place for a new connection, first in its pipeline: given back when it closes; past the
    /// limit, a connection in plain text is answered `503` as it opens and closed, nothing read, and one in TLS
    /// (`answers` false: bytes before the handshake would be garbage to it) closed at once. Nil: no limit.
    package func configureConnectionLimit(_ connections: ConnectionLimit?, answers: Bool = true) throws {
        guard let connections else { return }
        if connections.take() {
            try addHandler(ConnectionPlace(in: connections))  // given back when the connection closes
        } else {
            try addHandler(RefusedConnectionHandler(answers: answers))  // answered 503 and closed, nothing read
        }
    }

    /// The guards of one HTTP/2 stream, after the stream's conversion to HTTP/1's parts
    /// (`HTTP2FramePayloadToHTTP1ServerCodec`): a stream closed before its request's end made an error (as a
    /// connection lost mid-body is over HTTP/1.1), the stream's idle timeout (a stream that never sends its body), its
    /// write timeout (a peer that never opens the stream's window), the close after a refusal (the stream is reset
    /// `linger` after the answer, its body unread) and `Expect: 100-continue` with resumable uploads' `104`.
    ///
    /// What HTTP/1's pipeline does besides is the connection's over HTTP/2: its limit and write timeout, the deadline
    /// for a request's head (a stream's head comes whole, in one header block), and framing, which HTTP/2's own
    /// frames carry and NIO's HTTP/2 handler checks.
    package func configureGuardedHTTPStream(guards: HTTPServerGuards, resumableUploads: ResumableUploads?) throws {
        // A read's DATA frames as one part; first, so that what it holds goes on before the error of a cut stream.
        try addHandler(BodyCoalescingHandler())
        try addHandler(StreamEndHandler())  // a stream closed mid-body is an error, not a body's end
        if let idleTimeout = guards.idleTimeout {
            try addHandler(ReadIdleHandler(timeout: idleTimeout))
        }
        try addHandlers([
            WriteTimeoutHandler(timeout: guards.writeTimeout), CloseAfterResponseHandler(linger: guards.linger),
            HTTPContinueHandler(resumableUploads: resumableUploads),
        ])
    }

    /// The write timeout of a connection as a whole, nearest the socket: writes that make no progress for `timeout`
    /// close it (HTTP/2's connection, whose streams have their own).
    package func configureWriteTimeout(_ timeout: TimeAmount) throws {
        try addHandler(WriteTimeoutHandler(timeout: timeout))
    }
}
