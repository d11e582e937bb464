import NIOCore

/// Why the server limits its connections (with a ``Slots``), so that `accept` never runs out of descriptors.
///
/// NIO 2.101 spins on a listening socket whose `accept` fails with `EMFILE`: its `ServerSocketChannel` clears
/// `readPending` only after a successful accept, so the socket stays registered for reading and the event loop
/// retries at once, about 10,000 times a second (a core's worth, measured with 300 idle connections against 128
/// descriptors), and answers no one. `AcceptBackoffHandler` cannot stop it. So the server never lets `accept` fail:
/// connections past the limit are answered `503` with `Retry-After` and closed at once, each holding its
/// descriptor for a moment only.
enum ConnectionLimit {
    /// A limit that fits the process's descriptors beside `uploads` spool files and 64 for everything else.
    static func fittingDescriptors(uploads: Int) -> Int {
        max(1, Slots.descriptorLimit() - 64 - uploads)
    }
}

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

    /// The refusals that may linger at once, shared by every connection of one server: 16 of the 64 descriptors
    /// ``ConnectionLimit`` keeps spare.
    static let lingeringRefusals = Slots(limit: 16)

    private let lingering: Slots
    private let linger: TimeAmount

    init(lingering: Slots = RefusedConnectionHandler.lingeringRefusals, linger: TimeAmount = .milliseconds(250)) {
        self.lingering = lingering
        self.linger = linger
    }

    func channelActive(context: ChannelHandlerContext) {
        let channel = context.channel
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
