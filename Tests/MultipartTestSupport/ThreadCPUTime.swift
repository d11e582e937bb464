import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The CPU time the calling thread has used so far.
///
/// Unlike a wall clock it stands still while the thread waits for a core, so two of its readings compare the
/// same way on an idle machine and on one whose cores are busy with other work (measured here: a 64 MB scan took
/// 0.55–0.59 s of thread CPU time both idle and under `stress -c 2 -m 1`, while its wall time doubled).
package func threadCPUTime() -> Duration {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return .seconds(Int64(time.tv_sec)) + .nanoseconds(Int64(time.tv_nsec))
}

/// The thread CPU time `body` takes on the calling thread.
package func measureThreadCPUTime<Result>(_ body: () throws -> Result) rethrows -> (Result, Duration) {
    let start = threadCPUTime()
    let result = try body()
    return (result, threadCPUTime() - start)
}

/// The thread CPU time async `body` takes on `executor`'s one thread, where every one of its nonisolated steps
/// runs (work it hands to another task, such as the spooler's hashing, is not counted).
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
package func measureThreadCPUTime<Result: Sendable>(
    on executor: OneThreadExecutor, _ body: @Sendable () async throws -> Result
) async throws -> (Result, Duration) {
    try await withTaskExecutorPreference(executor) {
        let thread = pthread_self()
        let start = threadCPUTime()
        let result = try await body()
        let time = threadCPUTime() - start
        #expect(pthread_equal(thread, pthread_self()) != 0, "the measured work left the executor's thread")
        return (result, time)
    }
}

/// A task executor with one thread of its own, stopped by ``shutdown()``.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
package final class OneThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []  // guarded by `condition`
    private var stopping = false  // guarded by `condition`

    package init() {
        let thread = Thread { [self] in run() }
        thread.name = "OneThreadExecutor"
        thread.start()
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Ends the thread once the jobs enqueued so far have run.
    package func shutdown() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// The ratio of the CPU time of a run at a large size to one at a quarter of it: about 4 for a linear algorithm,
/// about 16 for a quadratic one.
///
/// Each size is measured once; when the ratio is at `limit` or above, both are measured again, up to `attempts`
/// times in all, and the lowest ratio of one attempt's pair is kept, so that one run slowed by something else on the
/// machine (a page fault storm, a descheduled core) does not fail the check while a quadratic loop, slower on every
/// run, still does. (Comparing the minimum of each size's runs instead let one unusually fast run of the medium size
/// fail a linear check: 1.7 ms for 16 MB against its usual 7 ms, seen in a test run.)
package func linearGrowthRatio(
    limit: Double, attempts: Int = 3, medium: () throws -> Duration, large: () throws -> Duration
) rethrows -> (ratio: Double, medium: Duration, large: Duration) {
    var best = try pair(medium(), large())
    for _ in 1..<attempts where best.ratio >= limit {
        let next = try pair(medium(), large())
        if next.ratio < best.ratio { best = next }
    }
    return best
}

/// One attempt's sizes and their ratio.
private func pair(_ medium: Duration, _ large: Duration) -> (ratio: Double, medium: Duration, large: Duration) {
    (large / medium, medium, large)
}

/// ``linearGrowthRatio(limit:attempts:medium:large:)`` for async runs.
package func linearGrowthRatio(
    limit: Double, attempts: Int = 3, medium: () async throws -> Duration, large: () async throws -> Duration
) async rethrows -> (ratio: Double, medium: Duration, large: Duration) {
    var best = pair(try await medium(), try await large())
    for _ in 1..<attempts where best.ratio >= limit {
        let next = pair(try await medium(), try await large())
        if next.ratio < best.ratio { best = next }
    }
    return best
}

/// Runs `work` on a thread of its own and returns what it returns.
///
/// Swift Testing runs a synchronous test on one of the cooperative pool's threads (two on a 2-core machine) for
/// as long as it takes: two 64 MB floods at once hold both for minutes, and every async test beside them waits,
/// its timers included, which made timing-sensitive tests (a body timeout's window) misread a starved process for a
/// slow client. Long synchronous work goes here instead; its checks stay on the test's task.
package func onThreadOfItsOwn<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result
{
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Swift.Result { try work() }) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}
