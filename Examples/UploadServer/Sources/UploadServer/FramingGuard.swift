import NIOCore
import NIOHTTP1

/// Refuses request framing that readers could disagree on (RFC 9112 §6.1, §6.3), before any handler reads the body:
///
/// - a transfer coding other than `chunked` alone (`Transfer-Encoding: gzip, chunked` was accepted with the gzip
///   ignored): 501, as the RFC asks of a coding the server does not implement;
/// - `Transfer-Encoding` in an HTTP/1.0 request, which must be read as faulty framing: 400;
/// - `Transfer-Encoding` beside `Content-Length`, the request-smuggling pair: 400.
///
/// Each answer closes the connection, and nothing of the request goes further.
final class FramingGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    /// Set once a request was refused: the rest of the connection's input is dropped until it closes.
    private var refused = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        if case .head(let head) = unwrapInboundIn(data), let answer = Self.refusal(of: head) {
            refused = true
            answer.send(through: context)
            return
        }
        context.fireChannelRead(data)
    }

    /// Why `head`'s framing is refused, or nil when it is sound.
    static func refusal(of head: HTTPRequestHead) -> ErrorAnswer? {
        let encodings = head.headers["transfer-encoding"]
        guard !encodings.isEmpty else { return nil }
        if head.version.major == 1 && head.version.minor == 0 {
            return ErrorAnswer(
                status: .badRequest, code: "invalidFraming",
                message: "an HTTP/1.0 request cannot use Transfer-Encoding (RFC 9112 §6.1)")
        }
        let codings = encodings.flatMap { $0.split(separator: ",") }.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard codings == ["chunked"] else {
            return ErrorAnswer(
                status: .notImplemented, code: "unsupportedTransferCoding",
                message: "Transfer-Encoding \(codings.joined(separator: ", ")) is not implemented: only chunked is")
        }
        guard head.headers["content-length"].isEmpty else {
            return ErrorAnswer(
                status: .badRequest, code: "invalidFraming",
                message: "a request cannot give both Transfer-Encoding and Content-Length (RFC 9112 §6.3)")
        }
        return nil
    }
}

@available(*, unavailable)
extension FramingGuard: Sendable {}
