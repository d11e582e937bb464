import Foundation

/// A task executor with one thread of its own.
///
/// package-benchmark runs an async benchmark by blocking a thread on a semaphore while a `Task` runs it, which
/// takes one of the two threads of this machine's cooperative pool. Work that spreads over two threads (the
/// spooler hashes on a second one) would find one; run it on this executor
/// (`withTaskExecutorPreference(executor) { … }`) and it has the pool's free thread beside its own, as a server's
/// handler has.
@available(macOS 15.0, *)
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    public init() {
        let thread = Thread { [unowned self] in self.run() }
        thread.name = "ThreadExecutor"
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
