import Metrics

/// Bytes of memory that all the store writers given it may hold at once, however many uploads run: a store that
/// gathers a file's bytes in memory before sending them on (the S3 store gathers parts of 8 MiB) takes from it as
/// it gathers and gives back as it frees.
///
/// Without it each upload's bound is per file, and the process's memory is that bound times the uploads in flight:
/// 25 uploads into S3 took a server past 1 GB, and 40 clients that sent 7.5 MiB and then trickled held 364 MB with
/// no S3 traffic at all. With it, a writer that finds no room waits, first come first served, up to ``maxWait``,
/// then fails its upload with ``MultipartError/Code/serverBusy`` (HTTP 503); the spooler's body timeout cuts the
/// wait sooner when its deadline comes first, and a cancelled upload stops waiting at once.
///
/// One budget is meant to be shared by every store writer in the process (``shared``, the default of the S3
/// store); a server sizes its concurrent uploads from it.
///
/// ```swift
/// let budget = MultipartMemoryBudget(bytes: 512 << 20, maxWait: .seconds(20))
/// try await budget.reserve(1 << 20)      // waits for room, or throws serverBusy / CancellationError
/// budget.release(1 << 20)
/// ```
public final class MultipartMemoryBudget: Sendable {
    /// The most bytes the writers may hold at once.
    public let bytes: Int
    /// The longest a writer waits for room before its upload fails with ``MultipartError/Code/serverBusy``.
    public let maxWait: Duration

    /// The budget store writers use unless given another: 256 MiB, a wait of at most 30 s.
    public static let shared = MultipartMemoryBudget(bytes: 256 << 20, maxWait: .seconds(30))

    /// What changes together: the bytes taken, the writers waiting (oldest first), and the waits begun but not yet
    /// queued, with the error that ended one of them before it was (a cancellation or the timer, racing the
    /// queueing).
    private struct State {
        var used = 0
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
        var starting: [UInt64: (any Error)?] = [:]

        /// Takes the waiters at the front that fit in `bytes`, and their bytes: the caller resumes them.
        mutating func takeReady(within bytes: Int) -> [CheckedContinuation<Void, any Error>] {
            var taken = 0
            while taken < waiters.count, used + waiters[taken].count <= bytes {
                used += waiters[taken].count
                taken += 1
            }
            defer { waiters.removeFirst(taken) }  // once: a wake-up costs what it wakes, not that times the queue
            return waiters[..<taken].map(\.continuation)
        }
    }

    private struct Waiter {
        let id: UInt64
        let count: Int
        let continuation: CheckedContinuation<Void, any Error>
    }

    private let state = LockedValue(State())
    /// ``MultipartMetrics/memoryBudgetInUse``, made with the factory in effect when the budget is made.
    private let inUse = Meter(label: MultipartMetrics.memoryBudgetInUse)

    /// Runs `change` on the state under the lock, and adds what it took or gave back to the gauge.
    private func changing<Result>(_ change: (inout State) -> Result) -> Result {
        let (result, delta) = state.withLock { state in
            let before = state.used
            let result = change(&state)
            return (result, state.used - before)
        }
        inUse.add(Int64(delta))
        return result
    }

    /// A budget of `bytes` (at least 1 MiB), with writers waiting at most `maxWait` for room.
    public init(bytes: Int, maxWait: Duration = .seconds(30)) {
        self.bytes = max(1 << 20, bytes)
        self.maxWait = maxWait
    }

    /// The bytes held now.
    public var usedBytes: Int { state.withLock { $0.used } }
    /// The writers waiting for room now.
    public var waitingCount: Int { state.withLock { $0.waiters.count } }

    /// Takes `count` bytes (at most ``bytes``), waiting for room behind the writers already waiting.
    ///
    /// - Throws: ``MultipartError/Code/serverBusy`` after ``maxWait`` without room; `CancellationError` when the
    ///   task is cancelled while it waits (nothing is then taken).
    public func reserve(_ count: Int) async throws {
        let count = min(max(0, count), bytes)
        let id: UInt64? = changing { [bytes] state in
            if state.waiters.isEmpty && state.used + count <= bytes {
                state.used += count
                return nil
            }
            state.nextID += 1
            state.starting[state.nextID] = .some(nil)
            return state.nextID
        }
        guard let id else { return }
        let timer = Task { [maxWait] in
            try await Task.sleep(for: maxWait)
            self.fail(
                id,
                MultipartError(
                    code: .serverBusy,
                    message: "no room for \(count) bytes in the memory budget of \(bytes) bytes after waiting "
                        + "\(maxWait): every byte is held by uploads in progress"))
        }
        defer { timer.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ended: (any Error)? = state.withLock { state in
                    if let error = state.starting.removeValue(forKey: id) ?? nil { return error }
                    state.waiters.append(Waiter(id: id, count: count, continuation: continuation))
                    return nil
                }
                if let ended { continuation.resume(throwing: ended) } else { wakeWaiters() }
            }
        } onCancel: {
            fail(id, CancellationError())
        }
    }

    /// Takes `count` bytes when they fit now and no writer waits before this one; false, and nothing taken,
    /// otherwise.
    public func tryReserve(_ count: Int) -> Bool {
        changing { [bytes] state in
            guard state.waiters.isEmpty, state.used + count <= bytes else { return false }
            state.used += max(0, count)
            return true
        }
    }

    /// Gives `count` bytes back, and lets the waiting writers that now fit go on, in order.
    public func release(_ count: Int) {
        guard count > 0 else { return }
        changing { $0.used = max(0, $0.used - count) }
        wakeWaiters()
    }

    /// Resumes the waiters at the front that fit, taking their bytes.
    private func wakeWaiters() {
        for continuation in changing({ [bytes] in $0.takeReady(within: bytes) }) { continuation.resume() }
    }

    /// Ends the wait of `id` with `error`, if it still waits.
    private func fail(_ id: UInt64, _ error: any Error) {
        let waiter: Waiter? = state.withLock { state in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
                // Not queued yet: it ends as it queues.
                if state.starting[id] != nil { state.starting[id] = .some(error) }
                return nil
            }
            return state.waiters.remove(at: index)
        }
        waiter?.continuation.resume(throwing: error)
        if waiter != nil { wakeWaiters() }  // a large waiter gone may let smaller ones behind it go on
    }
}
