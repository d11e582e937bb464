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
public final class HTTPContinueHandler: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPServerRequestPart
    public typealias InboundOut = HTTPServerRequestPart
    public typealias OutboundIn = HTTPServerResponsePart
    public typealias OutboundOut = HTTPServerResponsePart

    private var machine = ContinueStateMachine()

    public init() {}

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            let version = head.version
            let wantsContinue =
                (version.major > 1 || (version.major == 1 && version.minor >= 1))
                && head.headers["expect"].contains { $0.lowercased() == "100-continue" }
            if machine.requestArrived(wantsContinue: wantsContinue) { sendContinue(context: context) }
        }
        context.fireChannelRead(data)
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
            if machine.responseEnded() { sendContinue(context: context) }
        }
    }

    private func sendContinue(context: ChannelHandlerContext) {
        let head = HTTPResponseHead(version: .http1_1, status: .continue)
        context.writeAndFlush(wrapOutboundOut(.head(head)), promise: nil)
    }
}

@available(*, unavailable)
extension HTTPContinueHandler: Sendable {}
