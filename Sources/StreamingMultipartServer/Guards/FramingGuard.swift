import Foundation
import NIOCore
import NIOHTTP1

/// Refuses request framing that readers could disagree on (RFC 9112 §6.1, §6.3), before any handler reads the body:
///
/// - a transfer coding other than `chunked` alone (`Transfer-Encoding: gzip, chunked` was accepted with the gzip
///   ignored): 501, as the RFC asks of a coding the server does not implement;
/// - `Transfer-Encoding` in an HTTP/1.0 request, which must be read as faulty framing: 400;
/// - `Transfer-Encoding` beside `Content-Length`, the request-smuggling pair: 400.
///
/// Each answer closes the connection, and nothing of the request goes further. A refused request pipelined behind
/// others is answered once their responses have ended, never in the middle of one.
final class FramingGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// Set once a request was refused: the rest of the connection's input is dropped until it closes.
    private var refused = false
    /// Requests passed on whose response has not ended.
    private var inFlight = 0
    /// The refusal waiting for those responses to end.
    private var pending: GuardAnswer?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        if case .head(let head) = unwrapInboundIn(data) {
            if let answer = Self.refusal(of: head) {
                refused = true
                if inFlight == 0 { answer.send(through: context) } else { pending = answer }
                return
            }
            inFlight += 1
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let ends = if case .end = unwrapOutboundIn(data) { true } else { false }
        context.write(data, promise: promise)
        guard ends else { return }
        inFlight = max(0, inFlight - 1)
        if inFlight == 0, let answer = pending {
            pending = nil
            answer.send(through: context)
        }
    }

    /// Why `head`'s framing is refused, or nil when it is sound.
    static func refusal(of head: HTTPRequestHead) -> GuardAnswer? {
        let encodings = head.headers["transfer-encoding"]
        guard !encodings.isEmpty else { return nil }
        if head.version.major == 1 && head.version.minor == 0 {
            return GuardAnswer(
                status: .badRequest, code: "invalidFraming",
                message: "an HTTP/1.0 request cannot use Transfer-Encoding (RFC 9112 §6.1)")
        }
        let codings = encodings.flatMap { $0.split(separator: ",") }.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard codings == ["chunked"] else {
            return GuardAnswer(
                status: .notImplemented, code: "unsupportedTransferCoding",
                message: "Transfer-Encoding \(codings.joined(separator: ", ")) is not implemented: only chunked is")
        }
        guard head.headers["content-length"].isEmpty else {
            return GuardAnswer(
                status: .badRequest, code: "invalidFraming",
                message: "a request cannot give both Transfer-Encoding and Content-Length (RFC 9112 §6.3)")
        }
        return nil
    }
}

@available(*, unavailable)
extension FramingGuard: Sendable {}
