/// A body's ``BodyClock`` shared between the task that reads the body (which counts each chunk) and an alarm
/// (``startAlarm(_:)``) that wakes when the rule would break and then checks it: the reader's chunks alone cannot
/// tell that a client sent nothing at all.
///
/// On the continuous clock the alarm is an entry of ``SleepQueue``'s, not a task: a small form read whole before
/// its window ends costs a heap insertion and a removal (a task sleeping beside each body cost a form two tasks and
/// their thread wake-ups). On another clock (a test's) it is a task that sleeps on that clock.
///
/// A class, since the reader and the alarm hold it; its clock is behind a lock, taken once a chunk and once a
/// wake-up.
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
        var alarm = Alarm.none

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

    /// Where the alarm is: not started, an entry of the sleep queue, a task on another clock, or stopped for good.
    private enum Alarm {
        case none
        case queued(UInt64)
        case task(Task<Void, Never>)
        case stopped
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

    /// Calls `breaking` once, when the rule breaks (``failure`` then holds its error), unless ``stopAlarm()`` comes
    /// first.
    func startAlarm(_ breaking: @escaping @Sendable () -> Void) {
        guard time is ContinuousMultipartClock else {
            let task = Task { [self] in
                do {
                    try await watch()
                } catch {
                    if failure != nil { breaking() }
                }
            }
            let stopped = state.withLock { state -> Bool in
                if case .stopped = state.alarm { return true }
                state.alarm = .task(task)
                return false
            }
            if stopped { task.cancel() }
            return
        }
        queueAlarm(breaking)
    }

    /// Puts the alarm on the sleep queue at the instant the rule would break; when it wakes, checks the rule and
    /// calls `breaking`, or queues itself again (the body brought bytes, or waited on the store, meanwhile).
    private func queueAlarm(_ breaking: @escaping @Sendable () -> Void) {
        let wake = state.withLock { [now = time.now] in $0.clock.breaksAt(now: now) }
        let id = SleepQueue.shared.schedule(at: wake) { [self] in
            let now = time.now
            do {
                try state.withLock { try $0.checking { try $0.check(at: now) } }
                queueAlarm(breaking)
            } catch {
                breaking()
            }
        }
        let stopped = state.withLock { state -> Bool in
            switch state.alarm {
            case .stopped: return true
            // An alarm due at once may have run and queued its next (a later id) before this line: keep that one.
            case .queued(let newer) where newer > id: return false
            case .none, .queued, .task: break
            }
            state.alarm = .queued(id)
            return false
        }
        if stopped { SleepQueue.shared.cancelAlarm(id) }
    }

    /// Stops the alarm for good: the body is read (or given up).
    func stopAlarm() {
        let alarm = state.withLock { state -> Alarm in
            defer { state.alarm = .stopped }
            return state.alarm
        }
        switch alarm {
        case .queued(let id): SleepQueue.shared.cancelAlarm(id)
        case .task(let task): task.cancel()
        case .none, .stopped: break
        }
    }

    /// Sleeps until the rule breaks, then throws its ``MultipartError/Code/timedOut``; cancelling the task ends it
    /// with `CancellationError`.
    private func watch() async throws {
        while true {
            let wake = state.withLock { [now = time.now] in $0.clock.breaksAt(now: now) }
            try await time.sleep(until: wake)
            let now = time.now
            try state.withLock { try $0.checking { try $0.check(at: now) } }
        }
    }
}
