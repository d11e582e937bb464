import Foundation
import Testing

@testable import StreamingMultipart

/// The one timer every sleep of the continuous clock shares (``SleepQueue``): a sleep ends at or after its deadline,
/// a sleep that comes due before the one the timer waits for is not held behind it, a cancel ends a sleep at once in
/// whichever of its steps it comes, and sleeps cancelled long before their deadlines leave nothing behind. No check
/// reads a duration: a broken queue hangs a test until its time limit, or leaves a count the test reads.
@Suite struct SleepQueueTests {
    @Test(.timeLimit(.minutes(1)))
    func aSleepEndsAtOrAfterItsDeadline() async throws {
        let queue = SleepQueue()
        let deadlines = [80, 10, 40, 0, -5].map { ContinuousClock.now + .milliseconds($0) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for deadline in deadlines {
                group.addTask {
                    try await queue.sleep(until: deadline)
                    #expect(ContinuousClock.now >= deadline)
                }
            }
            try await group.waitForAll()
        }
        #expect(queue.underWay == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func anEarlierSleepIsNotHeldBehindTheOneTheTimerWaitsFor() async throws {
        let queue = SleepQueue()
        let long = Task { try await queue.sleep(until: .now + .seconds(3600)) }
        while queue.waiting < 1 { try await Task.sleep(for: .milliseconds(1)) }
        try await queue.sleep(until: .now + .milliseconds(20))  // hangs past the limit if held behind the hour
        #expect(queue.waiting == 1)
        long.cancel()
        await #expect(throws: CancellationError.self) { try await long.value }
        #expect(queue.underWay == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func aCancelEndsASleepInEachOfItsSteps() async throws {
        let queue = SleepQueue()
        let early = Task {
            while !Task.isCancelled { await Task.yield() }
            try await queue.sleep(until: .now + .seconds(3600))
        }
        early.cancel()
        await #expect(throws: CancellationError.self) { try await early.value }
        // A thousand sleeps cancelled as they start: some before their continuation exists, some while they wait.
        let sleeps = (0..<1000).map { _ in Task { try await queue.sleep(until: .now + .seconds(3600)) } }
        for sleep in sleeps { sleep.cancel() }
        for sleep in sleeps { await #expect(throws: CancellationError.self) { try await sleep.value } }
        #expect(queue.underWay == 0)
    }

    /// A hang guard, not a measure: its 2,000 tasks share the cooperative pool with the whole suite, and a run with
    /// the machine four times oversubscribed took 401 s of 10,000 (the count before).
    @Test(.timeLimit(.minutes(10)))
    func sleepsCancelledLongBeforeTheirDeadlinesLeaveABoundedHeap() async throws {
        let queue = SleepQueue()
        let long = Task { try await queue.sleep(until: .now + .seconds(3600)) }
        // A server's bodies: each sleeps a window beside its body, cancelled when the body ends. 2,000 of them, 200
        // under way at once.
        for _ in 0..<10 {
            let sleeps = (0..<200).map { _ in Task { try await queue.sleep(until: .now + .seconds(10)) } }
            while queue.waiting < 201 { try await Task.sleep(for: .milliseconds(1)) }
            for sleep in sleeps { sleep.cancel() }
            for sleep in sleeps { _ = try? await sleep.value }
        }
        #expect(queue.underWay == 1)
        // Rebuilt past twice the sleeps under way at an insertion (at most 201) and 64: not the 2,001 ever begun.
        #expect(queue.entries <= 2 * 201 + 64, "ended sleeps pile up in the heap: \(queue.entries)")
        long.cancel()
        _ = try? await long.value
    }

    @Test(.timeLimit(.minutes(1)))
    func anAlarmRunsAtItsDeadlineUnlessCancelled() async throws {
        let queue = SleepQueue()
        let ran = LockedValue<[String]>([])
        let cancelled = queue.schedule(at: .now + .milliseconds(10)) { ran.withLock { $0.append("cancelled") } }
        queue.cancelAlarm(cancelled)
        let deadline = ContinuousClock.now + .milliseconds(20)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            _ = queue.schedule(at: deadline) {
                ran.withLock { $0.append(ContinuousClock.now >= deadline ? "on time" : "early") }
                done.resume()
            }
        }
        // Later than the cancelled one's deadline, which would have run first.
        try await queue.sleep(until: .now + .milliseconds(20))
        #expect(ran.withLock { $0 } == ["on time"])
        #expect(queue.underWay == 0)
    }
}
