import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// The memory budget store writers share: room taken and given back, waits in order, a wait that ends in 503, and
/// a cancelled wait that takes nothing.
struct MemoryBudgetTests {
    let mib = 1 << 20

    @Test func aWriterWaitsForRoomAndGoesOnWhenItIsGivenBack() async throws {
        let budget = MultipartMemoryBudget(bytes: 2 * mib, maxWait: .seconds(60))
        try await budget.reserve(2 * mib)
        let waiting = Task { try await budget.reserve(mib) }
        while budget.waitingCount == 0 { await Task.yield() }
        #expect(budget.usedBytes == 2 * mib)
        budget.release(mib)
        try await waiting.value
        #expect(budget.usedBytes == 2 * mib && budget.waitingCount == 0)
    }

    /// First come, first served: a small request behind a large one waits for it, so that the large one is not
    /// starved by a stream of small ones.
    @Test func waitersGoOnInTheOrderTheyCame() async throws {
        let budget = MultipartMemoryBudget(bytes: 4 * mib, maxWait: .seconds(60))
        try await budget.reserve(4 * mib)
        let order = Locked<[String]>([])
        let large = Task {
            try await budget.reserve(3 * mib)
            order.update { $0.append("large") }
        }
        while budget.waitingCount < 1 { await Task.yield() }
        let small = Task {
            try await budget.reserve(mib)
            order.update { $0.append("small") }
        }
        while budget.waitingCount < 2 { await Task.yield() }
        #expect(!budget.tryReserve(1), "no one goes before the writers waiting")
        budget.release(mib)  // room for the small one alone: it still waits behind the large one
        await Task.yield()
        #expect(budget.waitingCount == 2 && order.get().isEmpty)
        budget.release(3 * mib)
        try await large.value
        try await small.value
        #expect(order.get().first == "large" && budget.usedBytes == 4 * mib)
    }

    @Test func aWaitPastMaxWaitIsServerBusy() async throws {
        let budget = MultipartMemoryBudget(bytes: mib, maxWait: .milliseconds(50))
        try await budget.reserve(mib)
        await #expect {
            try await budget.reserve(mib)
        } throws: { error in
            let error = error as? MultipartError
            return error?.code == .serverBusy && error?.httpStatus == 503 && error?.message.contains("waiting") == true
        }
        #expect(budget.usedBytes == mib && budget.waitingCount == 0)
    }

    @Test func aCancelledWaitTakesNothing() async throws {
        let budget = MultipartMemoryBudget(bytes: mib, maxWait: .seconds(60))
        try await budget.reserve(mib)
        let waiting = Task { try await budget.reserve(mib) }
        while budget.waitingCount == 0 { await Task.yield() }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(budget.waitingCount == 0)
        budget.release(mib)
        #expect(budget.usedBytes == 0)
    }

    /// Twenty writers taking and giving back at random never hold more than the budget together, and every one
    /// gets its turn (the wait is long: a busy machine may run the writers slowly, never wrongly).
    @Test func manyWritersNeverPassTheBudget() async throws {
        let budget = MultipartMemoryBudget(bytes: 8 * mib, maxWait: .seconds(600))
        let peak = Locked(0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<20 {
                group.addTask {
                    for round in 0..<10 {
                        let count = ((writer * 7 + round) % 3 + 1) * mib
                        try await budget.reserve(count)
                        peak.update { $0 = max($0, budget.usedBytes) }
                        await Task.yield()
                        budget.release(count)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(peak.get() <= 8 * mib && budget.usedBytes == 0)
    }
}
