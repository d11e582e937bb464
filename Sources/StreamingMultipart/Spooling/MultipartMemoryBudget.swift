import Foundation

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
public final class MultipartMemoryBudget: @unchecked Sendable {
    /// The most bytes the writers may hold at once.
    public let bytes: Int
    /// The longest a writer waits for room before its upload fails with ``MultipartError/Code/serverBusy``.
    public let maxWait: Duration

    /// The budget store writers use unless given another: 256 MiB, a wait of at most 30 s.
    public static let shared = MultipartMemoryBudget(bytes: 256 << 20, maxWait: .seconds(30))

    private let lock = NSLock()
    // Guarded by `lock`: the bytes taken, and the writers waiting, oldest first.
    private var used = 0
    private var waiters: [Waiter] = []
    private var nextID: UInt64 = 0
    /// Waits begun but not yet queued, and the error that ended one of them before it was (a cancellation or the
    /// timer, racing the queueing).
    private var starting: [UInt64: (any Error)?] = [:]

    private struct Waiter {
        let id: UInt64
        let count: Int
        let continuation: CheckedContinuation<Void, any Error>
    }

    /// A budget of `bytes` (at least 1 MiB), with writers waiting at most `maxWait` for room.
    public init(bytes: Int, maxWait: Duration = .seconds(30)) {
        self.bytes = max(1 << 20, bytes)
        self.maxWait = maxWait
    }

    /// The bytes held now.
    public var usedBytes: Int { lock.withLock { used } }
    /// The writers waiting for room now.
    public var waitingCount: Int { lock.withLock { waiters.count } }

    /// Takes `count` bytes (at most ``bytes``), waiting for room behind the writers already waiting.
    ///
    /// - Throws: ``MultipartError/Code/serverBusy`` after ``maxWait`` without room; `CancellationError` when the
    ///   task is cancelled while it waits (nothing is then taken).
    public func reserve(_ count: Int) async throws {
        let count = min(max(0, count), bytes)
        let id: UInt64? = lock.withLock {
            if waiters.isEmpty && used + count <= bytes {
                used += count
                return nil
            }
            nextID += 1
            starting[nextID] = .some(nil)
            return nextID
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
                let ended: (any Error)? = lock.withLock {
                    if let error = starting.removeValue(forKey: id) ?? nil { return error }
                    waiters.append(Waiter(id: id, count: count, continuation: continuation))
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
        lock.withLock {
            guard waiters.isEmpty, used + count <= bytes else { return false }
            used += max(0, count)
            return true
        }
    }

    /// Gives `count` bytes back, and lets the waiting writers that now fit go on, in order.
    public func release(_ count: Int) {
        guard count > 0 else { return }
        lock.withLock { used = max(0, used - count) }
        wakeWaiters()
    }

    /// Resumes the waiters at the front that fit, taking their bytes.
    private func wakeWaiters() {
        var ready: [CheckedContinuation<Void, any Error>] = []
        lock.withLock {
            while let first = waiters.first, used + first.count <= bytes {
                used += first.count
                ready.append(waiters.removeFirst().continuation)
            }
        }
        for continuation in ready { continuation.resume() }
    }

    /// Ends the wait of `id` with `error`, if it still waits.
    private func fail(_ id: UInt64, _ error: any Error) {
        let waiter: Waiter? = lock.withLock {
            guard let index = waiters.firstIndex(where: { $0.id == id }) else {
                if starting[id] != nil { starting[id] = .some(error) }  // not queued yet: it ends as it queues
                return nil
            }
            return waiters.remove(at: index)
        }
        waiter?.continuation.resume(throwing: error)
        if waiter != nil { wakeWaiters() }  // a large waiter gone may let smaller ones behind it go on
    }
}
