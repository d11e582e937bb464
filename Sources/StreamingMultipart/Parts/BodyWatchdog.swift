import Foundation

/// A body's ``BodyClock`` shared between the task that reads the body (which counts each chunk) and a watchdog task
/// (``watch()``) that sleeps until the rule would break and then checks it: the reader's chunks alone cannot tell
/// that a client sent nothing at all.
///
/// A class, since both tasks hold it; its clock is behind a lock, taken once a chunk and once a wake-up.
final class BodyWatchdog: @unchecked Sendable {
    private let lock = NSLock()
    private var clock: BodyClock  // guarded by `lock`
    private var broken: MultipartError?  // guarded by `lock`

    init(_ rule: MultipartBodyTimeout) { clock = BodyClock(rule) }

    /// The error the rule broke with, once it has.
    var failure: MultipartError? { lock.withLock { broken } }

    /// Starts the clock: the body's first pull is beginning.
    func begin() { lock.withLock { clock.begin() } }

    /// The reader waits on something other than the client (the spooler's store): the rate stops counting.
    func pause() { lock.withLock { clock.pause() } }

    /// The reader reads the body again.
    func resume() { lock.withLock { clock.resume() } }

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
