/// The clock that a body's timeout (``BodyWatchdog``), a resumable upload's window and lifetime, and an admission's
/// grace read: the continuous clock in production (``continuous``), a test's own clock in tests, so that no test of
/// a rate, a window or a timeout waits on wall time or fails when a loaded machine stretches it.
///
/// Its instants are `ContinuousClock`'s, so that a rule's arithmetic (``BodyClock``) is the same on either.
///
/// ```swift
/// let clock: any MultipartClock = .continuous
/// try await clock.sleep(until: clock.now + .seconds(5))
/// ```
package protocol MultipartClock: Sendable {
    /// The current instant.
    var now: ContinuousClock.Instant { get }

    /// Sleeps until `deadline` (at once when it has passed); throws `CancellationError` when the task is cancelled.
    func sleep(until deadline: ContinuousClock.Instant) async throws
}

extension MultipartClock {
    /// Sleeps for `duration` from ``now``.
    package func sleep(for duration: Duration) async throws {
        try await sleep(until: now + duration)
    }
}

/// The continuous clock: wall time that does not jump, and counts while the machine sleeps.
package struct ContinuousMultipartClock: MultipartClock {
    package init() {}

    package var now: ContinuousClock.Instant { .now }

    /// Sleeps on the one timer every such sleep shares (``SleepQueue``), not a timer of its own.
    package func sleep(until deadline: ContinuousClock.Instant) async throws {
        try await SleepQueue.shared.sleep(until: deadline)
    }
}

extension MultipartClock where Self == ContinuousMultipartClock {
    /// The continuous clock, which production code reads.
    package static var continuous: ContinuousMultipartClock { ContinuousMultipartClock() }
}
