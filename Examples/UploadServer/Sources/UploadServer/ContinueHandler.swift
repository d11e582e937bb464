import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers `Expect: 100-continue` with `100 Continue` as the request head arrives, so that a client waiting for it
/// (curl waits a second, then sends anyway) sends the body at once.
///
/// Hummingbird 2.28 does not answer it itself: its `ResponseWriter.writeInformationalHead` is reachable only from a
/// hand-written responder, not from a router's handler, so this sits in the channel pipeline after the HTTP codec.
/// It always answers: the server reads every body it accepts, and one it refuses (415, 400) gets its error after
/// the 100 instead of before, which RFC 9110 §10.1.1 allows.
final class ContinueHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let request) = unwrapInboundIn(data),
            request.headerFields[.expect]?.lowercased() == "100-continue"
        {
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
        }
        context.fireChannelRead(data)
    }
}
