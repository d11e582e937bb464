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
        #expect(queue.waiting == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func anEarlierSleepIsNotHeldBehindTheOneTheTimerWaitsFor() async throws {
        let queue = SleepQueue()
        let long = Task { try await queue.sleep(until: .now + .seconds(3600)) }
        while queue.waiting < 1 { await Task.yield() }
        try await queue.sleep(until: .now + .milliseconds(20))  // hangs past the limit if held behind the hour
        #expect(queue.waiting == 1)
        long.cancel()
        await #expect(throws: CancellationError.self) { try await long.value }
        #expect(queue.waiting == 0)
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
        #expect(queue.waiting == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func sleepsCancelledLongBeforeTheirDeadlinesLeaveABoundedHeap() async throws {
        let queue = SleepQueue()
        let long = Task { try await queue.sleep(until: .now + .seconds(3600)) }
        while queue.waiting < 1 { await Task.yield() }
        for _ in 0..<10_000 {  // a server's bodies: each sleeps a window beside its body, cancelled when it ends
            let sleep = Task { try await queue.sleep(until: .now + .seconds(10)) }
            while queue.waiting < 2 { await Task.yield() }
            sleep.cancel()
            _ = try? await sleep.value
        }
        #expect(queue.waiting == 1)
        // Rebuilt past twice the sleeps under way at an insertion (two) and 64.
        #expect(queue.entries <= 2 * 2 + 64, "ended sleeps pile up in the heap: \(queue.entries)")
        long.cancel()
        _ = try? await long.value
    }
}
