import Foundation

/// A body's ``BodyClock`` shared between the task that reads the body (which counts each chunk) and a watchdog task
/// (``watch()``) that sleeps until the rule would break and then checks it: the reader's chunks alone cannot tell
/// that a client sent nothing at all.
///
/// A class, since both tasks hold it; its clock is behind a lock, taken once a chunk and once a wake-up.
package final class BodyWatchdog: @unchecked Sendable {
    /// The watchdog of the body the current task reads, bound while the spooler reads it: a body that waits on
    /// something other than its client (a resumable upload waiting for the client to reconnect) pauses it.
    @TaskLocal package static var reading: BodyWatchdog?

    private let lock = NSLock()
    private var clock: BodyClock  // guarded by `lock`
    private var broken: MultipartError?  // guarded by `lock`
    /// The waits under way that are not the client's (a store call, a paused body): they may overlap.
    private var pauses = 0  // guarded by `lock`

    init(_ rule: MultipartBodyTimeout) { clock = BodyClock(rule) }

    /// The error the rule broke with, once it has.
    var failure: MultipartError? { lock.withLock { broken } }

    /// Starts the clock: the body's first pull is beginning.
    func begin() { lock.withLock { clock.begin() } }

    /// The reader waits on something other than the client (the spooler's store, a paused body): the rate stops
    /// counting until every such wait has called ``resume()``.
    package func pause() {
        lock.withLock {
            pauses += 1
            if pauses == 1 { clock.pause() }
        }
    }

    /// One wait that ``pause()`` began is over; the rate counts again once none is left.
    package func resume() {
        lock.withLock {
            guard pauses > 0 else { return }
            pauses -= 1
            if pauses == 0 { clock.resume() }
        }
    }

    /// Counts a chunk of `count` bytes that just arrived.
    ///
    /// - Throws: ``MultipartError/Code/timedOut`` when the rule broke before it came.
    func received(_ count: Int) throws {
        try lock.withLock {
            if let broken { throw broken }
            do {
                try clock.received(count)
            } catch let error as MultipartError {
                broken = error
                throw error
            }
        }
    }

    /// Sleeps until the rule breaks, then throws its ``MultipartError/Code/timedOut``; cancelling the task ends it
    /// with `CancellationError`.
    func watch() async throws {
        while true {
            let wake = lock.withLock { clock.breaksAt() }
            try await Task.sleep(until: wake, clock: .continuous)
            try lock.withLock {
                do {
                    try clock.check()
                } catch let error as MultipartError {
                    broken = error
                    throw error
                }
            }
        }
    }
}
