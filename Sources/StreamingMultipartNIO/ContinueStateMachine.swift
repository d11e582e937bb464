import NIOCore

/// Which request of a connection may get `100 Continue`, and when: the bookkeeping of ``HTTPContinueHandler``,
/// apart from NIO so that it reads (and is tested) as the state machine it is.
///
/// HTTP/1.1 answers requests in order. With pipelining, a request that expects `100-continue` may arrive while
/// earlier ones are still being answered; its `100 Continue` must wait until they are, or it lands in the middle of
/// another answer. Requests are kept in arrival order until their response ends, in a ring buffer: a client that
/// pipelines a flood of requests without reading (a server without backpressure reads them all) costs constant
/// time per request, never a shift of the whole queue.
struct ContinueStateMachine {
    /// A request that has arrived and whose response has not ended.
    struct Request {
        /// Whether it asked for `100 Continue` (and may get one: HTTP/1.1 or later).
        let wantsContinue: Bool
        /// Whether it got its `100 Continue`, or its final response began (then it gets none, RFC 9110 §10.1.1).
        var answered = false
    }

    /// The requests not yet answered in full, oldest first.
    private(set) var pending = CircularBuffer<Request>()

    /// A request head arrived. Returns whether to send `100 Continue` now: it asks for one and no earlier
    /// response is still being written.
    mutating func requestArrived(wantsContinue: Bool) -> Bool {
        pending.append(Request(wantsContinue: wantsContinue))
        return continueForCurrent()
    }

    /// A response head is being written for the oldest request: a final one (status 200 and above) means it gets
    /// no `100 Continue`; a `100 Continue` written by the server itself means it needs no other.
    mutating func responseHeadWritten(status: Int) {
        guard !pending.isEmpty, status == 100 || status >= 200 else { return }
        pending[pending.startIndex].answered = true
    }

    /// The oldest request's response ended. Returns whether to send `100 Continue` now, to the next request.
    mutating func responseEnded() -> Bool {
        guard !pending.isEmpty else { return false }
        pending.removeFirst()
        return continueForCurrent()
    }

    /// Marks the current (oldest) request answered and returns true when it is owed a `100 Continue`.
    private mutating func continueForCurrent() -> Bool {
        guard let current = pending.first, current.wantsContinue, !current.answered else { return false }
        pending[pending.startIndex].answered = true
        return true
    }
}
