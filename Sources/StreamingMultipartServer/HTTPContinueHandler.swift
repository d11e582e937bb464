public import NIOCore
public import NIOHTTP1

/// Answers `Expect: 100-continue` with `100 Continue`, in order, for any NIO HTTP/1 server: a client that waits for
/// it (curl waits a second, then sends anyway, about a second per 50 MB) sends its upload at once.
///
/// Add it after the HTTP/1 codec, where request heads are `HTTPServerRequestPart`s:
///
/// ```swift
/// try channel.pipeline.syncOperations.configureHTTPServerPipeline()
/// try channel.pipeline.syncOperations.addHandler(HTTPContinueHandler())
/// ```
///
/// Hummingbird 2 converts the parts to HTTPTypes before its `additionalChannelHandlers`; put this handler before
/// that conversion in a child channel of your own (`Examples/UploadServer` shows one). Vapor 4 has no place for a
/// channel handler of one's own in its HTTP/1 pipeline.
///
/// The `100 Continue` is sent when the request is the one being answered: at once when no earlier response is
/// being written, else when the last earlier response ends (pipelined requests never see it in the middle of
/// another answer). It is never sent once the request's final response has begun (a refusal such as 413 or 415
/// goes out instead, and the client need not send the body, RFC 9110 §10.1.1), never twice, and never to an
/// HTTP/1.0 request, whose expectation the server must ignore.
///
/// Given ``ResumableUploads``, it also offers resumption: a request that asks for it gets
/// `104 Upload Resumption Supported` with its upload's location, before its `100 Continue` and with the same ordering
/// rules, and carries the upload's token on to the responder (a token field a client sends is removed from every
/// request). An announced upload that no responder takes is forgotten when its response ends or the connection
/// closes.
public final class HTTPContinueHandler: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPServerRequestPart
    public typealias InboundOut = HTTPServerRequestPart
    public typealias OutboundIn = HTTPServerResponsePart
    public typealias OutboundOut = HTTPServerResponsePart

    private var machine = ContinueStateMachine()
    private let resumableUploads: ResumableUploads?
    /// The token announced to each request whose response has not ended, oldest first (with resumption only).
    private var announced = CircularBuffer<String?>()

    /// - Parameter resumableUploads: the uploads to offer resumption to; nil for none.
    public init(resumableUploads: ResumableUploads? = nil) {
        self.resumableUploads = resumableUploads
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else { return context.fireChannelRead(data) }
        let version = head.version
        var interims: [HTTPResponseHead] = []
        if let resumableUploads {
            head.headers.remove(name: ResumableUploads.tokenField)
            let announcement = resumableUploads.announce(head)
            announced.append(announcement?.token)
            if let announcement {
                head.headers.add(name: ResumableUploads.tokenField, value: announcement.token)
                if let interim = announcement.head { interims.append(interim) }
            }
        }
        if (version.major > 1 || (version.major == 1 && version.minor >= 1))
            && head.headers["expect"].contains(where: { $0.lowercased() == "100-continue" })
        {
            interims.append(HTTPResponseHead(version: .http1_1, status: .continue))
        }
        send(machine.requestArrived(interims: interims), context: context)
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            machine.responseHeadWritten(status: Int(head.status.code))
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            context.write(data, promise: promise)
            if let token = announced.popFirst() ?? nil { resumableUploads?.release(unclaimed: token) }
            send(machine.responseEnded(), context: context)
        }
    }

    public func channelInactive(context: ChannelHandlerContext) {
        while let token = announced.popFirst() {
            if let token { resumableUploads?.release(unclaimed: token) }
        }
        context.fireChannelInactive()
    }

    private func send(_ interims: [HTTPResponseHead], context: ChannelHandlerContext) {
        guard !interims.isEmpty else { return }
        for head in interims { context.write(wrapOutboundOut(.head(head)), promise: nil) }
        context.flush()
    }
}

@available(*, unavailable)
extension HTTPContinueHandler: Sendable {}
