import StreamingMultipart

/// A clock that moves only when the test moves it (``advance(by:)``): the body timeout's windows, a resumable
/// upload's window and lifetime run on it, so that a test of them waits on no wall time and cannot fail because a
/// loaded machine was slow. Its sleepers wake in the order of their deadlines as it passes them.
///
/// ```swift
/// let clock = ManualClock()
/// let body = ResumableBody(window: .seconds(60), clock: clock)
/// await clock.waitForSleepers(1)      // the window's timer is asleep
/// clock.advance(by: .seconds(61))     // and wakes: the upload is abandoned
/// ```
package final class ManualClock: MultipartClock {
    private struct Sleeper {
        let id: UInt64
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: ContinuousClock.Instant
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
        /// Sleeps cancelled before they were queued.
        var cancelled: Set<UInt64> = []
    }

    private let state: LockedValue<State>

    package init(start: ContinuousClock.Instant = .now) { state = LockedValue(State(now: start)) }

    package var now: ContinuousClock.Instant { state.withLock { $0.now } }

    /// The sleeps under way.
    package var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Moves the clock on by `duration`, and wakes every sleeper whose deadline it reaches, earliest first.
    package func advance(by duration: Duration) {
        let due: [Sleeper] = state.withLock { state in
            state.now += duration
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Waits, yielding, until at least `count` sleeps are under way: a timer the code under test starts in a task of
    /// its own is asleep before the test moves the clock past it.
    package func waitForSleepers(_ count: Int) async {
        while sleeperCount < count { await Task.yield() }
    }

    package func sleep(until deadline: ContinuousClock.Instant) async throws {
        let id: UInt64 = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper: Sleeper? = state.withLock { state in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
                    state.cancelled.insert(id)  // not queued yet: it ends as it queues
                    return nil
                }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }
}
