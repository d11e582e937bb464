import NIOCore

/// Answers a connection past the connection limit with a fixed 503 as soon as it is open, without reading anything:
/// the first handler of the pipeline, below the HTTP codec.
///
/// Closed at once after the answer, a client that was already sending its request would get a reset that makes its
/// kernel drop the 503 before the client reads it. So, as ``CloseAfterResponseHandler`` does, the sending side is
/// shut and the connection closed `linger` later, but only for `lingering.limit` refusals at once: under a flood
/// each lingering refusal holds a descriptor, and past that bound a refusal is closed at once (a flood of idle
/// connections sent nothing, so they get the answer and a plain close).
final class RefusedConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    static let answer: String = {
        let body = #"{"error":{"code":"busy","message":"the server has too many connections; try again shortly"}}"#
        return "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\n"
            + "Content-Type: application/json; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }()

    /// The refusals that may linger at once, shared by every connection of the process: 16 of the 64 descriptors
    /// ``ConnectionLimit/fittingDescriptors(uploads:)`` keeps spare.
    static let lingeringRefusals = ConnectionLimit(limit: 16)

    private let lingering: ConnectionLimit
    private let linger: TimeAmount
    /// Whether the connection gets the 503; false for one that would read it as garbage (TLS before its handshake):
    /// it is closed at once.
    private let answers: Bool

    init(
        lingering: ConnectionLimit = RefusedConnectionHandler.lingeringRefusals,
        linger: TimeAmount = .milliseconds(250),
        answers: Bool = true
    ) {
        self.lingering = lingering
        self.linger = linger
        self.answers = answers
    }

    func channelActive(context: ChannelHandlerContext) {
        let channel = context.channel
        guard answers else {
            channel.close(promise: nil)
            return
        }
        let (lingering, linger) = (self.lingering, self.linger)
        context.writeAndFlush(NIOAny(ByteBuffer(string: Self.answer))).whenComplete { _ in
            guard lingering.take() else {
                channel.close(promise: nil)
                return
            }
            channel.closeFuture.whenComplete { _ in lingering.give() }
            channel.close(mode: .output, promise: nil)
            channel.eventLoop.scheduleTask(in: linger) { channel.close(promise: nil) }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}  // nothing of the request goes further
}

@available(*, unavailable)
extension RefusedConnectionHandler: Sendable {}
