import Testing

@testable import StreamingMultipartAsyncHTTPClient

/// The gate's table, row by row, on its state machine alone: no connection, no clock. ExpectContinueTests runs the
/// same rows against servers.
struct ContinueGateStateMachineTests {
    typealias Machine = ContinueGate.StateMachine

    /// Parks a body's wait on `machine` after `before`, then runs `after` and hands on what it opened with; a wait
    /// that does not park, or an event that wakes no one, ends with `.notWatched` and a recorded issue.
    func openingOfAParkedWait(
        before: (inout Machine) -> Void, after: @escaping (inout Machine) -> Machine.OpenAction
    ) async -> ContinueGate.Opening {
        await withCheckedContinuation { continuation in
            var machine = Machine()
            before(&machine)
            guard case .park = machine.wait(continuation) else {
                Issue.record("the wait went on without parking")
                return continuation.resume(returning: .notWatched)
            }
            guard case .resume(let waiter, let opening) = after(&machine) else {
                Issue.record("the event woke no one")
                return continuation.resume(returning: .notWatched)
            }
            waiter.resume(returning: opening)
        }
    }

    @Test func aGateNoObserverSawOpensAsNotWatched() async {
        let opening = await withCheckedContinuation { continuation in
            var machine = Machine()
            guard case .resume(let opening) = machine.wait(continuation) else {
                Issue.record("an unwatched gate parked its body")
                return continuation.resume(returning: ContinueGate.Opening.timedOut)
            }
            // A late head and 100 change nothing: the body went on already.
            machine.requestHeadSent()
            guard case .none = machine.open(.continued) else {
                Issue.record("an open gate woke a waiter again")
                return continuation.resume(returning: opening)
            }
            continuation.resume(returning: opening)
        }
        #expect(opening == .notWatched)
    }

    @Test(arguments: [ContinueGate.Opening.continued, .answered, .ended])
    func aSentHeadWaitsForItsAnswer(_ answer: ContinueGate.Opening) async {
        let opening = await openingOfAParkedWait(before: { $0.requestHeadSent() }, after: { $0.open(answer) })
        #expect(opening == answer)
    }

    @Test func theTimeoutOpensAGateThatWaitsForContinue() async {
        let opening = await openingOfAParkedWait(before: { $0.requestHeadSent() }, after: { $0.timeUp() })
        #expect(opening == .timedOut)
    }

    @Test func aRefusalHoldsTheBodyPastTheTimeoutUntilItsAnswerEnds() async {
        let opening = await openingOfAParkedWait(
            before: {
                $0.requestHeadSent()
                $0.refused()
            },
            after: { machine in
                guard case .none = machine.timeUp() else {
                    Issue.record("the timeout opened a refused gate")
                    return .none
                }
                return machine.open(.ended)
            })
        #expect(opening == .ended)
    }

    @Test func aGateOpensOnceAndKeepsItsFirstOpening() {
        var machine = Machine()
        machine.requestHeadSent()
        #expect(isNone(machine.open(.answered)))
        #expect(isNone(machine.open(.ended)))
        #expect(isNone(machine.timeUp()))
    }

    @Test func interimAnswersAreReportedUpToTheLimitAndTheLastLocationIsKept() {
        var machine = Machine()
        machine.requestHeadSent()
        let reported = (1...ContinueGate.maxReportedInterimAnswers + 5).map { n in
            machine.interimAnswer(announcing: n == 3 ? "/uploads/a" : nil)
        }
        #expect(reported.filter { $0 }.count == ContinueGate.maxReportedInterimAnswers)
        #expect(reported.last == false)
        #expect(machine.resumeLocation == "/uploads/a")
    }

    private func isNone(_ action: Machine.OpenAction) -> Bool {
        if case .none = action { return true }
        return false
    }
}
