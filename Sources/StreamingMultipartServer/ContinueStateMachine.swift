import NIOCore
import NIOHTTP1

/// Which request of a connection may get its interim answers (`104 Upload Resumption Supported`, `100 Continue`),
/// and when: the bookkeeping of ``HTTPContinueHandler``, apart from NIO so that it reads (and is tested) as the state
/// machine it is.
///
/// HTTP/1.1 answers requests in order. With pipelining, a request owed an interim answer may arrive while earlier
/// ones are still being answered; its interim answers must wait until they are, or they land in the middle of
/// another answer. Requests are kept in arrival order until their response ends, in a ring buffer: a client that
/// pipelines a flood of requests without reading (a server without backpressure reads them all) costs constant
/// time per request, never a shift of the whole queue.
struct ContinueStateMachine {
    /// A request that has arrived and whose response has not ended.
    struct Request {
        /// The interim answers it is owed, in the order they go (HTTP/1.1 or later only).
        let interims: [HTTPResponseHead]
        /// Whether it got them, or its final response began (then it gets none, RFC 9110 §10.1.1).
        var answered = false
    }

    /// The requests not yet answered in full, oldest first.
    private(set) var pending = CircularBuffer<Request>()

    /// A request head arrived, owed `interims`. Returns the interim answers to send now: its own, when no earlier
    /// response is still being written.
    mutating func requestArrived(interims: [HTTPResponseHead]) -> [HTTPResponseHead] {
        pending.append(Request(interims: interims))
        return interimsForCurrent()
    }

    /// A response head is being written for the oldest request: a final one (status 200 and above) means it gets
    /// no interim answer; a `100 Continue` written by the server itself means it needs no other.
    mutating func responseHeadWritten(status: Int) {
        guard !pending.isEmpty, status == 100 || status >= 200 else { return }
        pending[pending.startIndex].answered = true
    }

    /// The oldest request's response ended. Returns the interim answers to send now, to the next request.
    mutating func responseEnded() -> [HTTPResponseHead] {
        guard !pending.isEmpty else { return [] }
        pending.removeFirst()
        return interimsForCurrent()
    }

    /// Marks the current (oldest) request answered and returns the interim answers it is owed.
    private mutating func interimsForCurrent() -> [HTTPResponseHead] {
        guard let current = pending.first, !current.interims.isEmpty, !current.answered else { return [] }
        pending[pending.startIndex].answered = true
        return current.interims
    }
}
