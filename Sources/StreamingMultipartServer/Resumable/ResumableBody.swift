import Foundation
import Metrics
import NIOConcurrencyHelpers
package import NIOCore
package import StreamingMultipart

/// One resumable upload's body as its route reads it (draft-ietf-httpbis-resumable-upload): the bytes of the request
/// that created the upload, then of each append, as one stream that pauses while the client reconnects. The parser,
/// the spooler and the store read it once, so nothing is parsed, hashed or stored twice, and limits count the form's
/// bytes once however often it resumed.
///
/// A request attaches (``attach(from:)``) and hands over its body (``feed(_:_:completes:onSupersede:)``); the reader
/// pulls that body itself, in its own task, so a chunk costs what it costs without resumption (no hand-over between
/// tasks), and backpressure reaches the sending socket as before. The request waits until its body is read to its
/// end, or it is cut off. ``offset`` counts the bytes the reader took: the `Upload-Offset` the server answers.
///
/// States, one ``StateMachine`` value in a lock box:
///
/// | event | feeding (one request attached) | waiting (no request) | finished, failed |
/// |---|---|---|---|
/// | an append from ``offset`` | the old request is cut off; feeding the new | feeding | refused: ended |
/// | an append from another offset | refused: conflict, the upload kept | refused: conflict | refused: ended |
/// | ``takeOver(after:)`` (the client asks the offset) | the request ends on its own, or is cut off: waiting | | |
/// | the request's bytes end, it completes the upload | finished: the reader reads the end | | |
/// | the request's bytes end otherwise, or it fails | waiting: a new window if it brought bytes, else the old one's rest | | |
/// | the window passes | (spent: failed as abandoned when the request ends without bytes) | failed: abandoned | |
/// | the lifetime passes | failed: expired | failed: expired | |
/// | ``cancel()``, ``cut()`` or the reader goes away | failed | failed | |
/// | ``cancelByClient()`` (its `DELETE`) | the request is cut off; failed, answered to no request | failed | |
///
/// A request cut off while the reader waits on its body is told through its `onSupersede` (the server closes its
/// connection), so that the reader's wait ends; a chunk that comes from it after that is dropped, never counted.
///
/// While the body waits for a request, its reader's body timeout (the spooler's ``MultipartBodyTimeout``) does not
/// count the rate: the client is reconnecting, and the window bounds that wait instead. A deadline still counts.
/// Only an append that brings bytes starts a new window: an empty append (200 bytes of headers) does not keep an
/// upload alive, and ``lifetime`` bounds the whole upload however it is fed.
package final class ResumableBody: AsyncSequence, Sendable {
    package typealias Element = ByteBuffer

    /// Why an append was refused.
    package enum Refusal: Error, Equatable {
        /// The append's offset is not the server's: answer 409 with this one. The upload is kept.
        case conflict(offset: Int64)
        /// The upload is over (finished, failed, cancelled, abandoned): answer 404.
        case ended
        /// A newer append, or the client asking the offset, took the upload over while this one was feeding it.
        case superseded
    }

    /// The resumable body the current task's route reads, if any: an admission ticket taken there is tied to it, so
    /// that cutting the ticket fails the body (``cut()``).
    @TaskLocal package static var beingRead: ResumableBody?

    /// How long the body waits for the client to resume before it fails as abandoned.
    package let window: Duration
    /// How long the upload may take in all, from its creation: then it fails as expired, fed or not.
    package let lifetime: Duration

    private let state: NIOLockedValueBox<StateMachine>
    /// What the window's and the lifetime's timers sleep on: the continuous clock but in tests.
    private let clock: any MultipartClock
    /// Where resumptions, abandonments and pauses are counted: its ``ResumableUploads``'.
    private let metrics: ResumableMetrics

    /// - Parameters:
    ///   - window: how long a paused upload waits for the client (default 5 minutes): then the reader's next chunk
    ///     fails with `MultipartError.Code.timedOut`.
    ///   - lifetime: how long the upload may take in all (default an hour): then it fails the same way.
    ///   - clock: what the window's and the lifetime's timers sleep on: the continuous clock, or a test's.
    ///   - metrics: where resumptions, abandonments and pauses are counted.
    package init(
        window: Duration = .seconds(300), lifetime: Duration = .seconds(3600), clock: any MultipartClock = .continuous,
        metrics: ResumableMetrics = ResumableMetrics()
    ) {
        self.window = window
        self.lifetime = lifetime
        self.clock = clock
        self.metrics = metrics
        state = NIOLockedValueBox(
            StateMachine(
                abandonment: MultipartError(
                    code: .timedOut,
                    message: "the upload was abandoned: the client did not resume it within "
                        + "\(window.components.seconds) s of its last bytes")))
        let lifeTimer = Task { [weak self] in
            do {
                try await clock.sleep(for: lifetime)
            } catch {
                return  // the upload ended
            }
            self?.expire()
        }
        locked { $0.lifetimeStarted(lifeTimer, &$1) }
    }

    deinit {
        locked { $0.stopTimers(&$1) }
        if state.withLockedValue(\.isPaused) { metrics.paused.decrement() }
    }

    /// The bytes the reader has taken: where the next append must start.
    package var offset: Int64 { state.withLockedValue { $0.received } }

    /// Whether the body has ended, whole (its last request completed it) or not.
    package var isOver: Bool { state.withLockedValue { $0.isOver } }

    /// Whether the upload's bytes are all there: the request that completed it ended.
    package var isComplete: Bool { state.withLockedValue { $0.isComplete } }

    /// Whether the reader waits for a request to feed the body (tests wait for it before they move their clock).
    package var readerWaits: Bool { state.withLockedValue { $0.readerWaits } }

    /// The request the route's answer belongs to: the one feeding the body, or the one that completed it, or the
    /// one that was doing either when the body failed (its reader stopped: the route answered early); nil while the
    /// body waits, or when it failed waiting.
    package var answeringSegment: Int? { state.withLockedValue { $0.answeringSegment } }

    // MARK: Requests

    /// Feeds the body from `offset` with `chunks`, a request's body: ``attach(from:)`` then
    /// ``feed(_:_:completes:onSupersede:)``.
    package func append<Chunks: AsyncSequence & Sendable>(
        from offset: Int64, _ chunks: Chunks, completes: Bool, onSupersede: @escaping @Sendable () -> Void = {}
    ) async throws where Chunks.Element == ByteBuffer {
        try await feed(try attach(from: offset), chunks, completes: completes, onSupersede: onSupersede)
    }

    /// Makes a request starting at `offset` the one that feeds the body (a request feeding it now is cut off) and
    /// returns its segment number, 1 for the first.
    ///
    /// - Throws: ``Refusal/conflict(offset:)`` when `offset` is not ``offset``; ``Refusal/ended``.
    package func attach(from offset: Int64) throws -> Int {
        let segment = try locked { machine, effects throws(Refusal) in try machine.attach(from: offset, &effects) }
        if segment > 1 { metrics.resumptions.increment() }
        return segment
    }

    /// Hands request `segment`'s body, `chunks`, to the reader, and waits until the reader has read it to its end.
    ///
    /// - Parameters:
    ///   - completes: whether the request's end is the upload's end (`Upload-Complete: ?1`); otherwise the body
    ///     waits for the next append.
    ///   - onSupersede: called when the request is cut off (a newer append, ``takeOver(after:)``) while the reader may be
    ///     waiting on `chunks`: it must end that wait (a server closes the request's connection).
    /// - Throws: a ``Refusal``; the error `chunks` threw (the connection dropped): the body then waits for the client
    ///   to resume, within ``window``.
    package func feed<Chunks: AsyncSequence & Sendable>(
        _ segment: Int, _ chunks: Chunks, completes: Bool, onSupersede: @escaping @Sendable () -> Void = {}
    ) async throws where Chunks.Element == ByteBuffer {
        let source = Source(segment: segment, chunks, completes: completes, onSupersede: onSupersede)
        try await withCheckedThrowingContinuation { (wait: CheckedContinuation<Void, any Error>) in
            locked { $0.feed(segment, StateMachine.Request(source: source, wait: wait), &$1) }
        }
    }

    /// The client asks where the upload got to (`HEAD`): once this returns, the request that fed the body adds
    /// nothing more, so ``offset`` is where the next append must start.
    ///
    /// That request first gets up to `grace` (on the body's clock) to end on its own. A client asks when its
    /// connection dropped, and what the connection brought before the drop may still be in the server's buffers:
    /// the reader takes it, so the offset counts it and the client does not send it again (a client that resumed
    /// 100 ms after a cut re-sent 4.5 MB a cut here, where one that waited seconds re-sent 1.4 MB). A request whose
    /// connection hangs half-open is cut off when `grace` passes.
    ///
    /// ```swift
    /// await upload.body.takeOver(after: .seconds(1))
    /// let offset = upload.body.offset  // the Upload-Offset to answer
    /// ```
    package func takeOver(after grace: Duration) async {
        let (id, segment) = state.withLockedValue { ($0.newAsker(), $0.feedingSegment) }
        guard let segment else { return }
        var timer: Task<Void, Never>?
        await withTaskCancellationHandler {
            try? await withCheckedThrowingContinuation { (wait: CheckedContinuation<Void, any Error>) in
                locked { $0.ask(id, segment: segment, wait, &$1) }
                // Started once the wait is registered, so that a grace that passes at once still ends it.
                timer = Task { [weak self, clock] in
                    try? await clock.sleep(for: grace)
                    self?.locked { $0.stopAsking(id, &$1) }
                }
            }
        } onCancel: {
            locked { $0.stopAsking(id, &$1) }
        }
        timer?.cancel()
        locked { $0.takeOver(segment: segment, &$1) }
    }

    /// Ends the upload now (the server shutting down): the reader's next chunk throws
    /// `MultipartError.Code.cancelled`, and appends are refused.
    package func cancel() {
        fail(MultipartError(code: .cancelled, message: "the upload was cancelled before its end"))
    }

    /// The client ended the upload (its `DELETE`): the request feeding it is cut off (its connection closed: the
    /// client asked for no answer to it), and the body fails with `MultipartError.Code.cancelled`, its route's
    /// answer going to no request.
    package func cancelByClient() {
        let error = MultipartError(code: .cancelled, message: "the client cancelled the upload")
        locked { $0.cancelByClient(error, &$1) }
    }

    /// The server's admission cut the upload to make room (its ticket was cut): the body fails now, paused or not,
    /// so that its reader lets go of what the upload holds (its spool file, its store's buffers, its share of the
    /// disk) at once, not at a next buffer a paused upload never gets.
    package func cut() {
        fail(MultipartError(code: .cancelled, message: "the server cut the upload to make room for another"))
    }

    /// The server is shutting down: a paused upload fails now, one being fed when its request ends without
    /// completing it, so that no upload holds the shutdown for its window.
    package func shutDown() {
        let error = MultipartError(code: .cancelled, message: "the server shut down before the upload's end")
        locked { $0.shutDown(error, &$1) }
    }

    /// The reader will read no more (its route answered, or failed): appends are refused from now on.
    package func readerWentAway() {
        fail(MultipartError(code: .cancelled, message: "the upload's reader stopped before its end"))
    }

    private func expire() {
        fail(
            MultipartError(
                code: .timedOut,
                message: "the upload was not complete within its lifetime of \(lifetime.components.seconds) s"))
    }

    private func fail(_ error: any Error) {
        locked { $0.fail(error, &$1) }
    }

    // MARK: The lock

    /// Runs `event` on the state under the lock, starts the window's timer it asks for under the same lock, then
    /// does what it left to do: ends waits, tells cut-off requests, stops timers. It does them when `event` throws
    /// too.
    private func locked<Result, Failure: Error>(
        _ event: (inout StateMachine, inout StateMachine.Effects) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var effects = StateMachine.Effects()
        var pauses = 0  // +1 when the event paused the upload, -1 when it ended a pause
        let result: Swift.Result<Result, Failure> = state.withLockedValue { machine in
            let wasPaused = machine.isPaused
            defer { pauses = (machine.isPaused ? 1 : 0) - (wasPaused ? 1 : 0) }
            let result: Swift.Result<Result, Failure>
            do throws(Failure) {
                result = .success(try event(&machine, &effects))
            } catch {
                result = .failure(error)
            }
            if let id = effects.startsWindow { machine.windowStarted(windowTimer(id), id: id) }
            machine.settleAskers(&effects)
            return result
        }
        for cut in effects.superseded { cut() }
        for timer in effects.cancelled { timer.cancel() }
        for (wait, outcome) in effects.resumes { wait.resume(with: outcome) }
        if pauses > 0 { metrics.paused.increment() } else if pauses < 0 { metrics.paused.decrement() }
        if effects.abandoned { metrics.abandoned.increment() }
        return try result.get()
    }

    /// The timer of window `id`: when the window passes before bytes come, the body is abandoned.
    private func windowTimer(_ id: Int) -> Task<Void, Never> {
        Task { [weak self, window, clock] in
            do {
                try await clock.sleep(for: window)
            } catch {
                return  // bytes came
            }
            self?.locked { $0.windowPassed(id: id, &$1) }
        }
    }

    // MARK: The reader

    /// The next chunk, nil at the end: read from the attached request's body, in this task; waits while no request
    /// feeds the body. Cancelling the reading task ends a wait with `CancellationError` (the spooler's body timeout
    /// cancels it).
    func next() async throws -> ByteBuffer? {
        let watchdog = BodyWatchdog.reading
        while true {
            switch try state.withLockedValue({ try $0.step() }) {
            case .end:
                return nil
            case .park:
                try await park(watchdog)
            case .read(let source):
                let result: Result<ByteBuffer?, any Error>
                do {
                    result = .success(try await source.next())
                } catch {
                    result = .failure(error)
                }
                if Task.isCancelled {
                    // The reader's own task was cancelled (the route is cut): what the pull gave, an end among them,
                    // is not the request's, which still feeds the body when the route answers.
                    locked { $0.left(source, &$1) }
                    throw CancellationError()
                }
                if let chunk = try locked({ try $0.took(result, from: source, &$1) }) { return chunk }
            }
        }
    }

    /// Waits for a request to feed the body (or for it to end); the body timeout is paused while none is attached.
    private func park(_ watchdog: BodyWatchdog?) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (reader: CheckedContinuation<Void, any Error>) in
                let cancelled = Task.isCancelled
                locked { $0.park(reader, watchdog: watchdog, cancelled: cancelled, &$1) }
            }
        } onCancel: {
            locked { $0.wakeReader(with: .failure(CancellationError()), &$1) }
        }
    }

    package func makeAsyncIterator() -> AsyncIterator { AsyncIterator(body: self) }

    /// Reads the body; one reader at a time. Dropping the last copy of it ends the upload for its senders.
    package struct AsyncIterator: AsyncIteratorProtocol {
        private let reading: Reading

        init(body: ResumableBody) { reading = Reading(body) }

        package mutating func next() async throws -> ByteBuffer? { try await reading.body.next() }
    }

    /// Tells the body when its iterator goes away.
    private final class Reading: Sendable {
        let body: ResumableBody
        init(_ body: ResumableBody) { self.body = body }
        deinit { body.readerWentAway() }
    }

    /// A request's body as the reader pulls it (its iterator is made, and used, by the reader's task alone).
    final class Source: Sendable {
        let segment: Int
        let completes: Bool
        let onSupersede: @Sendable () -> Void
        private let pull: @Sendable () async throws -> ByteBuffer?

        init<Chunks: AsyncSequence & Sendable>(
            segment: Int, _ chunks: Chunks, completes: Bool, onSupersede: @escaping @Sendable () -> Void
        ) where Chunks.Element == ByteBuffer {
            self.segment = segment
            self.completes = completes
            self.onSupersede = onSupersede
            let iterator = IteratorBox(chunks)
            pull = { try await iterator.next() }
        }

        func next() async throws -> ByteBuffer? { try await pull() }
    }

    /// The iterator of a request's body, made at the first pull.
    private final class IteratorBox<Chunks: AsyncSequence>: @unchecked Sendable where Chunks.Element == ByteBuffer {
        private let chunks: Chunks
        private var iterator: Chunks.AsyncIterator?

        init(_ chunks: Chunks) { self.chunks = chunks }

        func next() async throws -> ByteBuffer? {
            var current = iterator ?? chunks.makeAsyncIterator()
            let chunk = try await current.next()
            iterator = current
            return chunk
        }
    }
}

/// The metrics of a server's resumable uploads (``MultipartMetrics``' resumptions, abandoned uploads and paused
/// uploads), made with the factory in effect when its ``ResumableUploads`` is made and shared by its bodies.
package final class ResumableMetrics: Sendable {
    let resumptions = Counter(label: MultipartMetrics.resumptions)
    let abandoned = Counter(label: MultipartMetrics.resumableAbandoned)
    let paused = Meter(label: MultipartMetrics.uploadsPaused)

    package init() {}
}
