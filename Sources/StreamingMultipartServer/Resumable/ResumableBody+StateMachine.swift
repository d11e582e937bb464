import NIOCore
import StreamingMultipart

extension ResumableBody {
    /// The body's state as one value: the phase with the request feeding it, the reader's wait, the window and the
    /// counts. Each event is a mutating method that writes what must happen once the lock is let go into
    /// ``Effects`` (requests' and the reader's waits to end, a cut-off request's connection to close, timers to
    /// stop), as async-http-client's `Transaction+StateMachine`; the table on ``ResumableBody`` is its `switch`es.
    ///
    /// One effect runs under the lock: pausing and resuming the reader's body timeout, whose order must be the
    /// events' (a resume run before the pause it answers would leave the timeout paused); the watchdog's own lock
    /// is taken inside this one and never the other way round.
    struct StateMachine {
        private enum Phase {
            /// A request is attached; `request` once it handed its body over.
            case feeding(segment: Int, request: Request?)
            case waiting
            case finished(segment: Int)
            /// With the request that fed the body or had completed it when it failed, if one had.
            case failed(any Error, segment: Int?)
        }

        /// An attached request's body and its wait to be read.
        struct Request {
            let source: Source
            let wait: CheckedContinuation<Void, any Error>
        }

        /// The reader's wait for a request, with its body timeout, and whether that timeout is paused for it.
        private struct Reader {
            let continuation: CheckedContinuation<Void, any Error>
            let watchdog: BodyWatchdog?
            var paused = false
        }

        /// The request whose body the reader pulls now, outside the lock, and how that request's wait ends once the
        /// reader is out, if it was let go meanwhile: a request whose handler returned may have its body read by its
        /// connection again (Hummingbird drains it), and a stream of NIO's takes one reader at a time.
        private struct Pulling {
            let source: Source
            var release: (CheckedContinuation<Void, any Error>, Result<Void, any Error>)?
        }

        /// The window's timer: it runs from the start of a wait until bytes come, across empty appends.
        private enum Window {
            case idle
            case running(id: Int, timer: Task<Void, Never>?)
            /// The window passed while an append without bytes was attached: its end fails the body.
            case spent
        }

        /// What an event leaves to do once the lock is let go.
        struct Effects {
            /// Waits to end (a request's, the reader's), in order.
            fileprivate(set) var resumes: [(CheckedContinuation<Void, any Error>, Result<Void, any Error>)] = []
            /// Cut-off requests' `onSupersede`: their connections close.
            fileprivate(set) var superseded: [@Sendable () -> Void] = []
            /// Timers no longer needed.
            fileprivate(set) var cancelled: [Task<Void, Never>] = []
            /// A window to time, under this id: the body starts its timer before it lets the lock go.
            fileprivate(set) var startsWindow: Int?
            /// The body failed as abandoned: its window passed with no bytes from the client.
            fileprivate(set) var abandoned = false
        }

        /// A client that asks the offset while request `segment` feeds the body, waiting for that request to end
        /// on its own (`takeOver(after:)`).
        private struct Asker {
            let segment: Int
            let wait: CheckedContinuation<Void, any Error>
        }

        private var phase = Phase.waiting
        private var askers: [Int: Asker] = [:]
        private var asked = 0
        private(set) var received: Int64 = 0
        private var segments = 0
        private var reader: Reader?
        private var pulling: Pulling?
        private var window = Window.idle
        private var windows = 0
        private var lifeTimer: Task<Void, Never>?
        /// Set when the server shuts down: the body fails instead of waiting.
        private var closing: MultipartError?
        /// The error a body that the window abandoned fails with.
        private let abandonment: MultipartError

        init(abandonment: MultipartError) { self.abandonment = abandonment }

        // MARK: Questions

        var isOver: Bool {
            switch phase {
            case .finished, .failed: true
            case .feeding, .waiting: false
            }
        }

        var isComplete: Bool {
            if case .finished = phase { return true }
            return false
        }

        var readerWaits: Bool { reader != nil }

        /// Whether the upload is paused: a request fed it, and none feeds it now.
        var isPaused: Bool {
            if case .waiting = phase { return segments > 0 }
            return false
        }

        var answeringSegment: Int? {
            switch phase {
            case .feeding(let segment, _), .finished(let segment): segment
            case .failed(_, let segment): segment
            case .waiting: nil
            }
        }

        // MARK: Timers

        /// The upload's lifetime timer, started with the body.
        mutating func lifetimeStarted(_ timer: Task<Void, Never>, _ effects: inout Effects) {
            if isOver { effects.cancelled.append(timer) } else { lifeTimer = timer }
        }

        /// The body goes away: its timers stop.
        mutating func stopTimers(_ effects: inout Effects) {
            stopWindow(&effects)
            if let lifeTimer { effects.cancelled.append(lifeTimer) }
            lifeTimer = nil
        }

        /// The timer of window `id`, started under the same lock as the event that asked for it.
        mutating func windowStarted(_ timer: Task<Void, Never>, id: Int) {
            guard case .running(id, nil) = window else { return }
            window = .running(id: id, timer: timer)
        }

        /// Window `id` passed: a waiting body is abandoned; a body fed by an append that brought no bytes yet fails
        /// when that append ends without them.
        mutating func windowPassed(id: Int, _ effects: inout Effects) {
            guard case .running(id, _) = window else { return }  // bytes came meanwhile
            window = .idle
            switch phase {
            case .waiting:
                effects.abandoned = true
                fail(abandonment, &effects)
            case .feeding: window = .spent
            case .finished, .failed: break
            }
        }

        // MARK: Requests

        /// A request starting at `offset` becomes the one feeding the body; returns its segment number.
        mutating func attach(from offset: Int64, _ effects: inout Effects) throws(Refusal) -> Int {
            if isOver { throw .ended }
            guard offset == received else { throw .conflict(offset: received) }
            cutOff(&effects)
            segments += 1
            phase = .feeding(segment: segments, request: nil)
            return segments  // the window's timer runs on until the append brings bytes
        }

        /// Request `segment` hands its body over; it is refused when it no longer feeds the body.
        mutating func feed(_ segment: Int, _ request: Request, _ effects: inout Effects) {
            guard case .feeding(segment, let earlier) = phase else {
                return effects.resumes.append((request.wait, .failure(refusal)))
            }
            if let earlier { release(earlier, .failure(Refusal.superseded), &effects) }
            phase = .feeding(segment: segment, request: request)
            wakeReader(with: .success(()), &effects)
        }

        /// The client asked for the offset: the request feeding the body adds nothing more.
        mutating func takeOver(_ effects: inout Effects) {
            guard case .feeding = phase else { return }
            cutOff(&effects)
            waitForClient(&effects)
        }

        /// The request feeding the body now, if one does.
        var feedingSegment: Int? {
            if case .feeding(let segment, _) = phase { return segment }
            return nil
        }

        /// A number for the next client that asks the offset.
        mutating func newAsker() -> Int {
            asked += 1
            return asked
        }

        /// A client asking the offset waits, under `id`, for request `segment` to end on its own; at once when that
        /// request no longer feeds the body.
        mutating func ask(
            _ id: Int, segment: Int, _ wait: CheckedContinuation<Void, any Error>, _ effects: inout Effects
        ) {
            askers[id] = Asker(segment: segment, wait: wait)
            settleAskers(&effects)
        }

        /// Asker `id` waits no more (its grace passed, or its task was cancelled).
        mutating func stopAsking(_ id: Int, _ effects: inout Effects) {
            if let asker = askers.removeValue(forKey: id) { effects.resumes.append((asker.wait, .success(()))) }
        }

        /// The askers whose request no longer feeds the body (it ended, was cut off, or the body is over) wait no
        /// more. The body checks after every event, so no transition has to remember them.
        mutating func settleAskers(_ effects: inout Effects) {
            for (id, asker) in askers where feedingSegment != asker.segment { stopAsking(id, &effects) }
        }

        /// The client asked for the offset and request `segment` still feeds the body: it adds nothing more.
        mutating func takeOver(segment: Int, _ effects: inout Effects) {
            guard feedingSegment == segment else { return }
            takeOver(&effects)
        }

        /// The client's `DELETE`: the request feeding the body is cut off, and the body fails answered to none.
        mutating func cancelByClient(_ error: MultipartError, _ effects: inout Effects) {
            guard !isOver else { return }
            cutOff(&effects)
            phase = .waiting
            fail(error, &effects)
        }

        /// The server shuts down: a paused body fails now, a fed one when its request ends without completing it.
        mutating func shutDown(_ error: MultipartError, _ effects: inout Effects) {
            closing = error
            if case .waiting = phase { fail(error, &effects) }
        }

        /// The body fails with `error`, unless it is over.
        mutating func fail(_ error: any Error, _ effects: inout Effects) {
            let segment: Int?
            switch phase {
            case .finished, .failed:
                return
            case .feeding(let fed, let request):
                segment = fed
                if let request { release(request, .failure(Refusal.ended), &effects) }
            case .waiting:
                segment = nil
            }
            phase = .failed(error, segment: segment)
            stopWindow(&effects)
            if let lifeTimer { effects.cancelled.append(lifeTimer) }
            lifeTimer = nil
            wakeReader(with: .failure(error), &effects)
        }

        /// The refusal for a request that no longer feeds the body: a later request or the client asking the
        /// offset cut it off, or the upload ended.
        private var refusal: Refusal {
            if case .failed = phase { return .ended }
            return .superseded
        }

        /// The request feeding the body is cut off: its connection is told, and its wait ends.
        private mutating func cutOff(_ effects: inout Effects) {
            guard case .feeding(let segment, let request?) = phase else { return }
            phase = .feeding(segment: segment, request: nil)
            effects.superseded.append(request.source.onSupersede)
            release(request, .failure(Refusal.superseded), &effects)
        }

        /// Ends `request`'s wait with `result`, once the reader is not inside its body.
        private mutating func release(_ request: Request, _ result: Result<Void, any Error>, _ effects: inout Effects) {
            if pulling?.source === request.source {
                if pulling?.release == nil { pulling?.release = (request.wait, result) }
            } else {
                effects.resumes.append((request.wait, result))
            }
        }

        /// No request feeds the body: a window starts unless one runs already (no bytes came since it began), and a
        /// reader already waiting stops counting the rate.
        private mutating func waitForClient(_ effects: inout Effects) {
            if let closing { return fail(closing, &effects) }
            if case .spent = window {
                phase = .waiting
                effects.abandoned = true
                return fail(abandonment, &effects)
            }
            phase = .waiting
            pauseReader()
            guard case .idle = window else { return }
            windows += 1
            window = .running(id: windows, timer: nil)
            effects.startsWindow = windows
        }

        private mutating func stopWindow(_ effects: inout Effects) {
            if case .running(_, let timer?) = window { effects.cancelled.append(timer) }
            window = .idle
        }

        // MARK: The reader

        /// What the reader does next.
        enum Step {
            case read(Source)
            case end
            case park
        }

        /// What the reader does now.
        mutating func step() throws -> Step {
            switch phase {
            case .finished: return .end
            case .failed(let error, _): throw error
            case .waiting, .feeding(_, nil): return .park
            case .feeding(_, let request?):
                pulling = Pulling(source: request.source)
                return .read(request.source)
            }
        }

        /// Handles what `source` gave the reader: returns a chunk to hand on, or nil to look again (the chunk of a
        /// request cut off meanwhile, an empty one, the end of a request's body: then the body has finished, or
        /// waits).
        mutating func took(
            _ result: Result<ByteBuffer?, any Error>, from source: Source, _ effects: inout Effects
        ) throws -> ByteBuffer? {
            left(source, &effects)
            guard case .feeding(let segment, let request?) = phase, request.source === source else {
                if case .failed(let error, _) = phase { throw error }
                return nil  // cut off: what it sent is not the upload's
            }
            switch result {
            case .success(.some(let chunk)):
                guard chunk.readableBytes > 0 else { return nil }
                received += Int64(chunk.readableBytes)
                stopWindow(&effects)  // bytes came: the next wait starts a window anew
                return chunk
            case .success(.none):
                phase = .feeding(segment: segment, request: nil)
                if source.completes {
                    phase = .finished(segment: segment)
                    if let lifeTimer { effects.cancelled.append(lifeTimer) }
                    lifeTimer = nil
                } else {
                    waitForClient(&effects)
                }
                release(request, .success(()), &effects)
                return nil
            case .failure(let error):
                phase = .feeding(segment: segment, request: nil)
                waitForClient(&effects)
                release(request, .failure(error), &effects)
                return nil
            }
        }

        /// The reader is out of `source`'s body: a wait that ended meanwhile is let go now.
        mutating func left(_ source: Source, _ effects: inout Effects) {
            guard let pulling, pulling.source === source else { return }
            self.pulling = nil
            if let release = pulling.release { effects.resumes.append(release) }
        }

        /// The reader waits for a request to feed the body, unless one does or the body is over (then it goes on
        /// at once); the body timeout is paused while none is attached.
        mutating func park(
            _ continuation: CheckedContinuation<Void, any Error>, watchdog: BodyWatchdog?, cancelled: Bool,
            _ effects: inout Effects
        ) {
            switch phase {
            case .finished, .failed, .feeding(_, .some): return effects.resumes.append((continuation, .success(())))
            case .waiting, .feeding(_, nil): break
            }
            if cancelled { return effects.resumes.append((continuation, .failure(CancellationError()))) }
            reader = Reader(continuation: continuation, watchdog: watchdog)
            if case .waiting = phase { pauseReader() }
        }

        /// The waiting reader's body timeout stops counting the rate.
        private mutating func pauseReader() {
            guard let current = reader, !current.paused else { return }
            reader?.paused = true
            current.watchdog?.pause()
        }

        /// Ends the reader's wait with `result`, if it waits, and lets its body timeout count again.
        mutating func wakeReader(with result: Result<Void, any Error>, _ effects: inout Effects) {
            guard let reader else { return }
            self.reader = nil
            if reader.paused { reader.watchdog?.resume() }
            effects.resumes.append((reader.continuation, result))
        }
    }
}
