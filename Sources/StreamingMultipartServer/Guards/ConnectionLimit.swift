import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// How many connections an HTTP server keeps open at once, so that `accept` never runs out of descriptors.
///
/// NIO 2.101 spins on a listening socket whose `accept` fails with `EMFILE`: its `ServerSocketChannel` clears
/// `readPending` only after a successful accept, so the socket stays registered for reading and the event loop
/// retries at once, about 10,000 times a second (a core's worth, measured with 300 idle connections against 128
/// descriptors), and answers no one. `AcceptBackoffHandler` cannot stop it. So a guarded server never lets `accept`
/// fail: ``HTTPServerGuards`` answers each connection past the limit `503` with `Retry-After` and closes it at once,
/// each holding its descriptor for a moment only.
///
/// ```swift
/// let uploads = ConnectionLimit.uploadsFittingDescriptors()
/// let guards = HTTPServerGuards(connections: .fittingDescriptors(uploads: uploads))
/// ```
public final class ConnectionLimit: Sendable {
    /// The most connections open at once.
    public let limit: Int
    private let taken = NIOLockedValueBox(0)

    /// A limit of `limit` connections (at least one).
    public init(limit: Int) { self.limit = max(1, limit) }

    /// The connections open now.
    public var open: Int { taken.withLockedValue { $0 } }

    /// Takes a place; false when all are taken.
    func take() -> Bool {
        taken.withLockedValue { [limit] taken in
            guard taken < limit else { return false }
            taken += 1
            return true
        }
    }

    func give() { taken.withLockedValue { $0 -= 1 } }

    /// A limit that fits this process's descriptors beside `uploads` spool files and 64 for everything else.
    public static func fittingDescriptors(uploads: Int) -> ConnectionLimit {
        ConnectionLimit(limit: descriptorLimit() - 64 - uploads)
    }

    /// The uploads at once that fit this process's descriptors: three for each (its connection, its spool file, and
    /// one more for a connection still sending its headers), 64 kept for everything else; at most 4096.
    public static func uploadsFittingDescriptors() -> Int {
        max(1, min(4096, (descriptorLimit() - 64) / 3))
    }

    /// This process's limit on open descriptors (`ulimit -n`); 256 when it cannot be read.
    public static func descriptorLimit() -> Int {
        var limits = rlimit()
        #if os(Linux)
        let resource = Int32(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limits) == 0 else { return 256 }
        return Int(min(limits.rlim_cur, 1 << 20))  // an unlimited limit is a huge number
    }
}

/// One connection's place in a ``ConnectionLimit``, given back when the handler leaves the pipeline: when the
/// connection closes.
final class ConnectionPlace: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let limit: ConnectionLimit
    private var held = true

    /// Holds a place already taken from `limit`.
    init(in limit: ConnectionLimit) { self.limit = limit }

    func handlerRemoved(context: ChannelHandlerContext) {
        guard held else { return }
        held = false
        limit.give()
    }
}

@available(*, unavailable)
extension ConnectionPlace: Sendable {}
