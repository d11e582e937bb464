import NIOCore
import StreamingMultipart
import Testing

@testable import StreamingMultipartServer

/// The rows of ResumableBody's table that races decide, on its state machine alone: no task pulls, no timer runs,
/// so each interleaving is written out in order. ResumableBodyTests runs the whole body.
struct ResumableBodyStateMachineTests {
    typealias Machine = ResumableBody.StateMachine

    struct Dropped: Error {}

    static let abandonment = MultipartError(code: .timedOut, message: "abandoned")

    func source(_ segment: Int, completes: Bool = false, onSupersede: @escaping @Sendable () -> Void = {})
        -> ResumableBody.Source
    {
        ResumableBody.Source(
            segment: segment, AsyncStream<ByteBuffer> { $0.finish() }, completes: completes,
            onSupersede: onSupersede)
    }

    /// How a request's wait ended: `events` runs with the wait, and must end it through the effects it collects.
    func outcomeOfAWait(
        _ events: (CheckedContinuation<Void, any Error>, inout Machine.Effects) -> Void
    ) async -> Result<Void, any Error> {
        do {
            try await withCheckedThrowingContinuation { (wait: CheckedContinuation<Void, any Error>) in
                var effects = Machine.Effects()
                events(wait, &effects)
                guard effects.resumes.count == 1 else {
                    Issue.record("the events ended \(effects.resumes.count) waits, not one")
                    return wait.resume()
                }
                for (wait, outcome) in effects.resumes { wait.resume(with: outcome) }
            }
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    @Test func anAppendFromAnotherOffsetIsAConflictAndAnEndedUploadRefusesAll() throws {
        var machine = Machine(abandonment: Self.abandonment)
        var effects = Machine.Effects()
        #expect(throws: ResumableBody.Refusal.conflict(offset: 0)) { try machine.attach(from: 5, &effects) }
        #expect(try machine.attach(from: 0, &effects) == 1)
        machine.fail(Dropped(), &effects)
        #expect(machine.isOver && !machine.isComplete && machine.answeringSegment == 1)
        #expect(throws: ResumableBody.Refusal.ended) { try machine.attach(from: 0, &effects) }
    }

    /// A newer append cuts off the request the reader is pulling: that request's connection is told at once, but its
    /// wait ends only once the reader is out of its body, and what the reader got from it is dropped.
    @Test func aRequestCutOffWhileItIsPulledIsLetGoWhenTheReaderIsOut() async {
        let told = LockedValue(0)
        let first = source(1, onSupersede: { told.withLock { $0 += 1 } })
        let outcome = await outcomeOfAWait { wait, effects in
            var machine = Machine(abandonment: Self.abandonment)
            let segment = try? machine.attach(from: 0, &effects)
            machine.feed(segment ?? 0, .init(source: first, wait: wait), &effects)
            guard case .read(let pulled) = try? machine.step(), pulled === first else {
                Issue.record("the reader did not pull the request")
                return
            }
            #expect((try? machine.attach(from: 0, &effects)) == 2)
            #expect(effects.superseded.count == 1 && effects.resumes.isEmpty)
            for tell in effects.superseded { tell() }
            let chunk = Result { try machine.took(.success(ByteBuffer(string: "late")), from: first, &effects) }
            guard case .success(nil) = chunk else {
                Issue.record("the cut-off request's chunk: \(chunk)")
                return
            }
            #expect(machine.received == 0 && effects.resumes.count == 1)
        }
        #expect(told.withLock { $0 } == 1)
        #expect(throws: ResumableBody.Refusal.superseded) { try outcome.get() }
    }

    /// The window passes while an append that brought no bytes is attached: the body lives on until that append
    /// ends without bytes, then fails as abandoned; its request still ends as read.
    @Test func aWindowSpentDuringAnEmptyAppendFailsTheBodyWhenTheAppendEnds() async throws {
        var machine = Machine(abandonment: Self.abandonment)
        let request = source(1)
        let outcome = await outcomeOfAWait { wait, effects in
            machine.takeOver(&effects)  // nothing attached: no change
            _ = try? machine.attach(from: 0, &effects)
            machine.feed(1, .init(source: request, wait: wait), &effects)
            machine.windowPassed(id: 0, &effects)  // no window ran yet: ignored
            #expect(!machine.isOver)
            _ = try? machine.step()
            _ = try? machine.took(.failure(Dropped()), from: request, &effects)
            guard let window = effects.startsWindow else {
                Issue.record("no window started")
                return
            }
            machine.windowPassed(id: window, &effects)
            #expect(machine.isOver)  // nothing attached when the window passed
        }
        #expect(throws: Dropped.self) { try outcome.get() }

        var again = Machine(abandonment: Self.abandonment)
        let dropped = await outcomeOfAWait { wait, effects in
            _ = try? again.attach(from: 0, &effects)
            again.feed(1, .init(source: request, wait: wait), &effects)
            _ = try? again.step()
            _ = try? again.took(.failure(Dropped()), from: request, &effects)
            #expect(effects.startsWindow == 1)
        }
        #expect(throws: Dropped.self) { try dropped.get() }
        let second = source(2)
        let ended = await outcomeOfAWait { wait, effects in
            #expect((try? again.attach(from: 0, &effects)) == 2)  // an append that brings nothing
            again.windowPassed(id: 1, &effects)
            #expect(!again.isOver)
            again.feed(2, .init(source: second, wait: wait), &effects)
            _ = try? again.step()
            _ = try? again.took(.success(nil), from: second, &effects)
            #expect(again.isOver && !again.isComplete)
        }
        #expect(throws: Never.self) { try ended.get() }
        #expect(throws: MultipartError.self) { try again.step() }
    }

    /// The server shuts down while a request feeds the body: the body fails when that request ends without
    /// completing it, answered to that request.
    @Test func aShutDownFailsAFedBodyWhenItsRequestEnds() async {
        var machine = Machine(abandonment: Self.abandonment)
        let request = source(1)
        let outcome = await outcomeOfAWait { wait, effects in
            _ = try? machine.attach(from: 0, &effects)
            machine.feed(1, .init(source: request, wait: wait), &effects)
            machine.shutDown(MultipartError(code: .cancelled, message: "shut down"), &effects)
            #expect(!machine.isOver)
            _ = try? machine.step()
            #expect((try? machine.took(.success(ByteBuffer(string: "ab")), from: request, &effects)) != nil)
            _ = try? machine.took(.success(nil), from: request, &effects)
        }
        #expect(throws: Never.self) { try outcome.get() }
        #expect(machine.isOver && machine.answeringSegment == 1 && machine.received == 2)
    }
}
