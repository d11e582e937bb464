public import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOHTTP2

extension HTTPClient.Configuration {
    /// Lets `HTTPClient/upload(_:to:method:headers:options:progress:)` see the server's interim answers, which
    /// AsyncHTTPClient drops:
    /// - a body sent with `Expect: 100-continue` waits for `100 Continue`, as curl's does: it starts when that
    ///   arrives, or after ``AsyncHTTPClient/HTTPClient/MultipartUploadOptions/expectContinueTimeout`` (1 s) without
    ///   an interim answer; a final answer that comes first (a 413, a 401, a 417) is the answer, and none of the body
    ///   is sent;
    /// - an upload that offers resumption (``AsyncHTTPClient/HTTPClient/MultipartUploadOptions/maxResumptions``)
    ///   learns from `104 Upload Resumption Supported` where to send the rest when its connection drops.
    ///
    /// ```swift
    /// var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
    /// configuration.enableInterimResponses()
    /// let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    /// let response = try await client.upload(body, to: "https://example.com/upload")
    /// ```
    ///
    /// AsyncHTTPClient itself drops interim answers and starts a body at once. This adds a handler to each HTTP/1.1
    /// connection and each HTTP/2 stream of the client that sees the answers' heads before AsyncHTTPClient does, and
    /// tells the upload of the request it belongs to; the upload reports each interim answer
    /// (``AsyncHTTPClient/HTTPClient/MultipartUploadEvent/interimResponse(_:)``). Other requests pass it untouched.
    /// The configuration's `http1_1ConnectionDebugInitializer` and `http2StreamChannelDebugInitializer` are kept and
    /// run first.
    public mutating func enableInterimResponses() {
        let previousStream = http2StreamChannelDebugInitializer
        http2StreamChannelDebugInitializer = { channel in
            let ready =
                previousStream?(channel).hop(to: channel.eventLoop) ?? channel.eventLoop.makeSucceededVoidFuture()
            return ready.flatMapThrowing {
                // After the stream's conversion to HTTP/1's parts, as after HTTP/1.1's decoder.
                let pipeline = channel.pipeline.syncOperations
                let codec = try pipeline.handler(type: HTTP2FramePayloadToHTTP1ClientCodec.self)
                try pipeline.addHandler(InterimAnswerObserver(version: .http2), position: .after(codec))
            }
        }
        let previous = http1_1ConnectionDebugInitializer
        http1_1ConnectionDebugInitializer = { channel in
            let ready = previous?(channel).hop(to: channel.eventLoop) ?? channel.eventLoop.makeSucceededVoidFuture()
            return ready.flatMapThrowing {
                let pipeline = channel.pipeline.syncOperations
                let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPResponseDecoder>.self)
                try pipeline.addHandler(InterimAnswerObserver(), position: .after(decoder))
            }
        }
    }
}

/// Sits between NIO's response decoder and AsyncHTTPClient's handler on an HTTP/1.1 connection: takes the gate of a
/// request head that carries a token in ``ContinueGates/attemptHeader`` (one that says `Expect: 100-continue` or
/// offers resumption) from ``ContinueGates``, removes the token, and tells the gate of the answer's heads, its end and
/// the connection's close. Everything else passes through unchanged.
final class InterimAnswerObserver: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    /// The gate of the request on the connection now, until its answer ends.
    private var gate: ContinueGate?
    /// The protocol the heads came over, which NIO's HTTP/2 conversion does not say of an interim head; nil: as
    /// they say.
    private let version: HTTPVersion?

    init(version: HTTPVersion? = nil) { self.version = version }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .head(var head) = unwrapOutboundIn(data),
            let token = head.headers.first(name: ContinueGates.attemptHeader)
        {
            // The request's own gate, by the token only its upload knows; the token never leaves the machine.
            gate = ContinueGates.shared.claim(token)
            head.headers.remove(name: ContinueGates.attemptHeader)
            context.write(wrapOutboundOut(.head(head)), promise: promise)
            return
        }
        context.write(data, promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        // AsyncHTTPClient first: at an answer's end it has finished the request before the body may go on.
        context.fireChannelRead(data)
        switch part {
        case .head(var head):
            head.version = version ?? head.version
            gate?.received(head)
        case .end:
            gate?.finished()
            gate = nil
        case .body:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        context.fireChannelInactive()  // AsyncHTTPClient first, as for an answer's end
        gate?.finished()
        gate = nil
    }
}
