/// A body's ``BodyClock`` shared between the task that reads the body (which counts each chunk) and a watchdog task
/// (``watch()``) that sleeps until the rule would break and then checks it: the reader's chunks alone cannot tell
/// that a client sent nothing at all.
///
/// A class, since both tasks hold it; its clock is behind a lock, taken once a chunk and once a wake-up.
package final class BodyWatchdog: Sendable {
    /// The watchdog of the body the current task reads, bound while the spooler reads it: a body that waits on
    /// something other than its client (a resumable upload waiting for the client to reconnect) pauses it.
    @TaskLocal package static var reading: BodyWatchdog?

    /// What changes together: the clock, the error it broke with, and the waits under way that are not the
    /// client's (a store call, a paused body), which may overlap.
    private struct State {
        var clock: BodyClock
        var broken: MultipartError?
        var pauses = 0

        /// Runs one of the clock's checks, keeping the error it throws.
        mutating func checking(_ check: (inout BodyClock) throws -> Void) throws {
            if let broken { throw broken }
            do {
                try check(&clock)
            } catch let error as MultipartError {
                broken = error
                throw error
            }
        }
    }

    private let state: LockedValue<State>
    /// What "now" is, and what the watchdog sleeps on: the continuous clock but in tests.
    private let time: any MultipartClock

    init(_ rule: MultipartBodyTimeout, clock: any MultipartClock = .continuous) {
        state = LockedValue(State(clock: BodyClock(rule)))
        time = clock
    }

    /// The error the rule broke with, once it has.
    var failure: MultipartError? { state.withLock { $0.broken } }

    /// Starts the clock: the body's first pull is beginning.
    func begin() {
        let now = time.now
        state.withLock { $0.clock.begin(at: now) }
    }

    /// The reader waits on something other than the client (the spooler's store, a paused body): the rate stops
    /// counting until every such wait has called ``resume()``.
    package func pause() {
        let now = time.now
        state.withLock { state in
            state.pauses += 1
            if state.pauses == 1 { state.clock.pause(at: now) }
        }
    }

    /// One wait that ``pause()`` began is over; the rate counts again once none is left.
    package func resume() {
        let now = time.now
        state.withLock { state in
            guard state.pauses > 0 else { return }
            state.pauses -= 1
            if state.pauses == 0 { state.clock.resume(at: now) }
        }
    }

    /// Counts a chunk of `count` bytes that just arrived.
    ///
    /// - Throws: ``MultipartError/Code/timedOut`` when the rule broke before it came.
    func received(_ count: Int) throws {
        let now = time.now
        try state.withLock { try $0.checking { try $0.received(count, at: now) } }
    }

    /// Sleeps until the rule breaks, then throws its ``MultipartError/Code/timedOut``; cancelling the task ends it
    /// with `CancellationError`.
    func watch() async throws {
        while true {
            let wake = state.withLock { [now = time.now] in $0.clock.breaksAt(now: now) }
            try await time.sleep(until: wake)
            let now = time.now
            try state.withLock { try $0.checking { try $0.check(at: now) } }
        }
    }
}
