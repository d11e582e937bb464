/// Every sleep of ``ContinuousMultipartClock`` on one timer: a sleeper waits on a continuation in a queue ordered by
/// deadline, and one task sleeps until the earliest deadline, then wakes every sleeper whose deadline has passed.
///
/// A server sleeps beside every body it reads (``BodyWatchdog``: until the body's rate would break) and cancels that
/// sleep when the body ends, almost always long before the deadline. `Task.sleep` arms a timer of Dispatch's for each
/// and leaves it armed after the cancel, so a server taking 10,000 small forms a second kept 100,000 timers pending
/// and spent a tenth of its samples in Dispatch's timer thread: a 4 KiB form cost the example server 240 µs of CPU
/// with a timer each, 173 µs with this queue (`Benchmarks/RESULTS.md`, issue 53). Here a cancelled sleep is a
/// dictionary removal, and a new sleep a heap insertion; the one timer is re-armed only when a sleep comes due
/// before the one it waits for (rare: a body's deadline is its start plus a window, later than the ones before it).
///
/// Bounds: a sleeper is one entry of ``State/sleepers`` until it ends; the heap keeps an ended one's entry until its
/// deadline passes or the heap holds more than twice the sleepers (plus 64), when it is rebuilt from them.
///
/// ```swift
/// try await SleepQueue.shared.sleep(until: .now + .seconds(10))  // CancellationError when the task is cancelled
/// ```
final class SleepQueue: Sendable {
    /// The continuous clock's queue.
    static let shared = SleepQueue()

    /// A queue of its own (a test's); the continuous clock uses ``shared``.
    init() {}

    /// One sleep's place in the heap; the heap is ordered by `deadline`, then by `id` (the order sleeps began).
    private struct Entry: Comparable, Sendable {
        var deadline: ContinuousClock.Instant
        var id: UInt64

        static func < (a: Entry, b: Entry) -> Bool { (a.deadline, a.id) < (b.deadline, b.id) }
    }

    /// A sleep: begun (its continuation not yet made), waiting on its continuation until its deadline, or cancelled
    /// before it began to wait.
    private enum Sleeper: Sendable {
        case begun
        case waiting(CheckedContinuation<Void, any Error>, deadline: ContinuousClock.Instant)
        case cancelledEarly
        /// An alarm (``schedule(at:_:)``): an action the timer runs at the deadline, no task waiting on it.
        case alarm(@Sendable () -> Void, deadline: ContinuousClock.Instant)
    }

    /// What comes due: continuations to resume, and alarms' actions to run.
    private struct Due {
        var continuations: [CheckedContinuation<Void, any Error>] = []
        var actions: [@Sendable () -> Void] = []

        func run() {
            for continuation in continuations { continuation.resume() }
            for action in actions { action() }
        }
    }

    /// What changes together: the sleepers, the heap of their deadlines, and the timer task with its deadline.
    private struct State: Sendable {
        var nextID: UInt64 = 0
        var sleepers: [UInt64: Sleeper] = [:]
        var heap = MinimumHeap<Entry>()
        /// The task sleeping until `deadline`, and its generation: a task that is no longer the current one ends.
        var timer: (deadline: ContinuousClock.Instant, generation: UInt64, task: Task<Void, Never>)?
        var generation: UInt64 = 0

        /// Takes every sleeper and alarm whose deadline is at or before `now` off the heap.
        mutating func due(at now: ContinuousClock.Instant) -> Due {
            var due = Due()
            while let first = heap.first, first.deadline <= now {
                heap.removeFirst()
                switch sleepers[first.id] {
                case .waiting(let continuation, _):
                    sleepers[first.id] = nil
                    due.continuations.append(continuation)
                case .alarm(let action, _):
                    sleepers[first.id] = nil
                    due.actions.append(action)
                case .begun, .cancelledEarly, nil:
                    break
                }
            }
            return due
        }

        /// The earliest deadline of a sleeper still waiting, dropping ended ones from the heap's top.
        mutating func earliest() -> ContinuousClock.Instant? {
            while let first = heap.first, sleepers[first.id] == nil { heap.removeFirst() }
            return heap.first?.deadline
        }

        /// Adds a waiting sleeper's deadline; rebuilds the heap from the sleepers when ended ones crowd it.
        mutating func insert(_ entry: Entry) {
            heap.insert(entry)
            guard heap.count > 2 * sleepers.count + 64 else { return }
            heap = MinimumHeap(
                sleepers.compactMap { id, sleeper in
                    switch sleeper {
                    case .waiting(_, let deadline), .alarm(_, let deadline): Entry(deadline: deadline, id: id)
                    case .begun, .cancelledEarly: nil
                    }
                })
        }
    }

    private let state = LockedValue(State())

    /// Sleeps until `deadline` (returns at once when it has passed).
    ///
    /// - Throws: `CancellationError` when the task is cancelled, at once, before or during the sleep.
    func sleep(until deadline: ContinuousClock.Instant) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.sleepers[state.nextID] = .begun
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (cancelled, staleTimer) = state.withLock { state -> (Bool, Task<Void, Never>?) in
                    if case .cancelledEarly = state.sleepers[id] {
                        state.sleepers[id] = nil
                        return (true, nil)
                    }
                    state.sleepers[id] = .waiting(continuation, deadline: deadline)
                    state.insert(Entry(deadline: deadline, id: id))
                    return (false, armTimer(&state, for: deadline))
                }
                staleTimer?.cancel()
                if cancelled { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                switch state.sleepers[id] {
                case .waiting(let continuation, _):
                    state.sleepers[id] = nil
                    return continuation
                case .begun:
                    state.sleepers[id] = .cancelledEarly  // its continuation, when made, resumes at once
                    return nil
                case .cancelledEarly, .alarm, nil:  // woken already (an id is a sleep's or an alarm's, never both)
                    return nil
                }
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Runs `action` on the timer's task at `deadline` (at once when it has passed), unless ``cancelAlarm(_:)``
    /// comes first; the alarm's id. No task waits on it: a body's watchdog is an alarm, not a task of its own.
    func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> UInt64 {
        let (id, staleTimer) = state.withLock { state -> (UInt64, Task<Void, Never>?) in
            state.nextID += 1
            state.sleepers[state.nextID] = .alarm(action, deadline: deadline)
            state.insert(Entry(deadline: deadline, id: state.nextID))
            return (state.nextID, armTimer(&state, for: deadline))
        }
        staleTimer?.cancel()
        return id
    }

    /// Takes the alarm `id` off the queue: its action does not run, unless it has begun to.
    func cancelAlarm(_ id: UInt64) {
        state.withLock { state in
            if case .alarm = state.sleepers[id] { state.sleepers[id] = nil }
        }
    }

    /// Starts a timer task for `deadline` when none waits or the one waiting wakes later; the task it replaces.
    private func armTimer(_ state: inout State, for deadline: ContinuousClock.Instant) -> Task<Void, Never>? {
        if let timer = state.timer, timer.deadline <= deadline { return nil }
        state.generation += 1
        let generation = state.generation
        let stale = state.timer?.task
        // Detached: the timer outlives the sleep that started it, and carries none of its task's values.
        let task = Task.detached { [self] in await runTimer(generation: generation, until: deadline) }
        state.timer = (deadline, generation, task)
        return stale
    }

    /// The timer task: sleeps until `deadline`, wakes the sleepers due, and goes on to the next deadline, until no
    /// sleeper waits or a newer timer replaces it.
    private func runTimer(generation: UInt64, until deadline: ContinuousClock.Instant) async {
        var deadline = deadline
        while true {
            do {
                try await Task.sleep(until: deadline, clock: .continuous)
            } catch {
                return  // replaced by a timer for an earlier deadline
            }
            let now = ContinuousClock.now
            let (due, next) = state.withLock { state -> (Due, ContinuousClock.Instant?) in
                guard state.timer?.generation == generation else { return (Due(), nil) }
                let due = state.due(at: now)
                let next = state.earliest()
                if let next { state.timer?.deadline = next } else { state.timer = nil }
                return (due, next)
            }
            due.run()  // outside the lock: an alarm may schedule again
            guard let next else { return }
            deadline = next
        }
    }

    /// How many sleeps are under way now, begun or waiting (for tests: none is left behind).
    var underWay: Int { state.withLock { $0.sleepers.count } }

    /// How many sleeps and alarms wait on the timer now, their deadlines in the heap (for tests).
    var waiting: Int {
        state.withLock { state in
            state.sleepers.values.count {
                switch $0 {
                case .waiting, .alarm: true
                case .begun, .cancelledEarly: false
                }
            }
        }
    }

    /// How many entries the heap holds now, ended sleeps' included (for tests: its bound).
    var entries: Int { state.withLock { $0.heap.count } }
}

/// A binary min-heap: `first` is the least element; `insert` and `removeFirst` take O(log n).
struct MinimumHeap<Element: Comparable> {
    private(set) var elements: [Element] = []

    init() {}

    /// A heap of `elements`, in O(n).
    init(_ elements: [Element]) {
        self.elements = elements
        for index in stride(from: elements.count / 2 - 1, through: 0, by: -1) { siftDown(from: index) }
    }

    var count: Int { elements.count }
    var first: Element? { elements.first }

    mutating func insert(_ element: Element) {
        elements.append(element)
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard elements[child] < elements[parent] else { break }
            elements.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    mutating func removeFirst() -> Element? {
        guard !elements.isEmpty else { return nil }
        elements.swapAt(0, elements.count - 1)
        let least = elements.removeLast()
        siftDown(from: 0)
        return least
    }

    private mutating func siftDown(from index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var least = parent
            if left < elements.count, elements[left] < elements[least] { least = left }
            if right < elements.count, elements[right] < elements[least] { least = right }
            guard least != parent else { return }
            elements.swapAt(parent, least)
            parent = least
        }
    }
}

extension MinimumHeap: Sendable where Element: Sendable {}
