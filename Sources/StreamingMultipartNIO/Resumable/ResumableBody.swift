import Foundation
package import NIOCore
import StreamingMultipart

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
/// States, one lock:
///
/// | event | feeding (one request attached) | waiting (no request) | finished, failed |
/// |---|---|---|---|
/// | an append from ``offset`` | the old request is cut off; feeding the new | feeding | refused: ended |
/// | an append from another offset | refused: conflict, the upload kept | refused: conflict | refused: ended |
/// | ``takeOver()`` (the client asks the offset) | the request is cut off; waiting | | |
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
package final class ResumableBody: AsyncSequence, @unchecked Sendable {
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

    private enum Phase {
        case feeding(segment: Int)
        case waiting
        case finished(segment: Int)
        /// With the request that fed the body or had completed it when it failed, if one had.
        case failed(any Error, segment: Int?)
    }

    /// The resumable body the current task's route reads, if any: an admission ticket taken there is tied to it, so
    /// that cutting the ticket fails the body (``cut()``).
    @TaskLocal package static var beingRead: ResumableBody?

    /// How long the body waits for the client to resume before it fails as abandoned.
    package let window: Duration
    /// How long the upload may take in all, from its creation: then it fails as expired, fed or not.
    package let lifetime: Duration

    private let lock = NSLock()
    private var phase = Phase.waiting  // guarded by `lock`
    private var received: Int64 = 0  // guarded by `lock`
    private var segments = 0  // guarded by `lock`
    /// The attached request's body, once it handed it over.
    private var source: Source?  // guarded by `lock`
    /// The reader's wait for a request, with its body timeout, and whether that timeout is paused for it.
    private var reader: CheckedContinuation<Void, any Error>?  // guarded by `lock`
    private var readerWatchdog: BodyWatchdog?  // guarded by `lock`
    private var readerPaused = false  // guarded by `lock`
    /// The window's timer: running from the start of a wait until bytes come, across empty appends.
    private var timer: Task<Void, Never>?  // guarded by `lock`
    /// Whether the window passed while an append without bytes was attached: its end fails the body.
    private var windowSpent = false  // guarded by `lock`
    private var lifeTimer: Task<Void, Never>?  // guarded by `lock`
    /// Set when the server shuts down: the body fails instead of waiting.
    private var closing: MultipartError?  // guarded by `lock`

    /// - Parameters:
    ///   - window: how long a paused upload waits for the client (default 5 minutes): then the reader's next chunk
    ///     fails with `MultipartError.Code.timedOut`.
    ///   - lifetime: how long the upload may take in all (default an hour): then it fails the same way.
    package init(window: Duration = .seconds(300), lifetime: Duration = .seconds(3600)) {
        self.window = window
        self.lifetime = lifetime
        lifeTimer = Task { [weak self] in
            do {
                try await Task.sleep(for: lifetime)
            } catch {
                return  // the upload ended
            }
            self?.expire()
        }
    }

    deinit {
        lifeTimer?.cancel()
        timer?.cancel()
    }

    /// The bytes the reader has taken: where the next append must start.
    package var offset: Int64 { lock.withLock { received } }

    /// Whether the body has ended, whole (its last request completed it) or not.
    package var isOver: Bool {
        lock.withLock {
            switch phase {
            case .finished, .failed: true
            case .feeding, .waiting: false
            }
        }
    }

    /// Whether the upload's bytes are all there: the request that completed it ended.
    package var isComplete: Bool {
        lock.withLock {
            if case .finished = phase { return true }
            return false
        }
    }

    /// The request the route's answer belongs to: the one feeding the body, or the one that completed it, or the
    /// one that was doing either when the body failed (its reader stopped: the route answered early); nil while the
    /// body waits, or when it failed waiting.
    package var answeringSegment: Int? {
        lock.withLock {
            switch phase {
            case .feeding(let segment), .finished(let segment): segment
            case .failed(_, let segment): segment
            case .waiting: nil
            }
        }
    }

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
        try lock.withLock {
            switch phase {
            case .finished, .failed: throw Refusal.ended
            case .feeding, .waiting: break
            }
            guard offset == received else { throw Refusal.conflict(offset: received) }
            cutOff()
            segments += 1
            phase = .feeding(segment: segments)
            // The window's timer runs on until the append brings bytes.
            return segments
        }
    }

    /// Hands request `segment`'s body, `chunks`, to the reader, and waits until the reader has read it to its end.
    ///
    /// - Parameters:
    ///   - completes: whether the request's end is the upload's end (`Upload-Complete: ?1`); otherwise the body
    ///     waits for the next append.
    ///   - onSupersede: called when the request is cut off (a newer append, ``takeOver()``) while the reader may be
    ///     waiting on `chunks`: it must end that wait (a server closes the request's connection).
    /// - Throws: a ``Refusal``; the error `chunks` threw (the connection dropped): the body then waits for the client
    ///   to resume, within ``window``.
    package func feed<Chunks: AsyncSequence & Sendable>(
        _ segment: Int, _ chunks: Chunks, completes: Bool, onSupersede: @escaping @Sendable () -> Void = {}
    ) async throws where Chunks.Element == ByteBuffer {
        let source = Source(segment: segment, chunks, completes: completes, onSupersede: onSupersede)
        try await withCheckedThrowingContinuation { (wait: CheckedContinuation<Void, any Error>) in
            lock.withLock {
                guard case .feeding(segment) = phase else { return wait.resume(throwing: phaseRefusal()) }
                source.wait = wait
                self.source = source
                wakeReader(with: .success(()))
            }
        }
    }

    /// The client asks where the upload got to (`HEAD`): the request feeding it now adds nothing more, so the
    /// offset answered is the one the next append must start from.
    package func takeOver() {
        lock.withLock {
            guard case .feeding = phase else { return }
            cutOff()
            wait()
        }
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
        lock.withLock {
            switch phase {
            case .finished, .failed: return
            case .feeding, .waiting:
                cutOff()
                phase = .waiting
                failLocked(error)
            }
        }
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
        lock.withLock {
            closing = error
            if case .waiting = phase { failLocked(error) }
        }
    }

    /// The reader will read no more (its route answered, or failed): appends are refused from now on.
    package func readerWentAway() {
        fail(MultipartError(code: .cancelled, message: "the upload's reader stopped before its end"))
    }

    /// The refusal for a request that no longer feeds the body: a later request or ``takeOver()`` cut it off, or
    /// the upload ended. Under `lock`.
    private func phaseRefusal() -> Refusal {
        if case .failed = phase { return .ended }
        return .superseded
    }

    /// The request feeding the body is cut off: its connection is told, and its wait ends. Under `lock`.
    private func cutOff() {
        guard let source else { return }
        self.source = nil
        source.onSupersede()
        release(source, .failure(Refusal.superseded))
    }

    /// Ends `source`'s request's wait with `result`, once the reader is not inside its body: a request whose handler
    /// returned may have its body read by its connection again (Hummingbird drains it), and a stream of NIO's takes
    /// one reader at a time. Under `lock`.
    private func release(_ source: Source, _ result: Result<Void, any Error>) {
        if source.inUse {
            if source.outcome == nil { source.outcome = result }
        } else {
            source.wait?.resume(with: result)
            source.wait = nil
        }
    }

    /// No request feeds the body: a window starts unless one runs already (no bytes came since it began), and a
    /// reader already waiting stops counting the rate. Under `lock`.
    private func wait() {
        if let closing { return failLocked(closing) }
        phase = .waiting
        source = nil
        if windowSpent { return failLocked(abandonment) }
        if reader != nil { pauseReader() }
        guard timer == nil else { return }
        let window = window
        timer = Task { [weak self] in
            do {
                try await Task.sleep(for: window)
            } catch {
                return  // bytes came
            }
            self?.abandon()
        }
    }

    private var abandonment: MultipartError {
        MultipartError(
            code: .timedOut,
            message: "the upload was abandoned: the client did not resume it within "
                + "\(window.components.seconds) s of its last bytes")
    }

    private func abandon() {
        lock.withLock {
            timer = nil
            switch phase {
            case .waiting: failLocked(abandonment)
            case .feeding: windowSpent = true  // an append without bytes so far: its end fails the body
            case .finished, .failed: break
            }
        }
    }

    private func expire() {
        fail(
            MultipartError(
                code: .timedOut,
                message: "the upload was not complete within its lifetime of \(lifetime.components.seconds) s"))
    }

    private func fail(_ error: any Error) {
        lock.withLock {
            switch phase {
            case .finished, .failed: return
            case .feeding, .waiting: failLocked(error)
            }
        }
    }

    private func failLocked(_ error: any Error) {
        switch phase {
        case .feeding(let segment), .finished(let segment): phase = .failed(error, segment: segment)
        case .waiting, .failed: phase = .failed(error, segment: nil)
        }
        timer?.cancel()
        timer = nil
        lifeTimer?.cancel()
        lifeTimer = nil
        if let source {
            self.source = nil
            release(source, .failure(Refusal.ended))
        }
        wakeReader(with: .failure(error))
    }

    // MARK: The reader

    /// What the reader does next.
    private enum Step {
        case read(Source)
        case end
        case park
    }

    /// The next chunk, nil at the end: read from the attached request's body, in this task; waits while no request
    /// feeds the body. Cancelling the reading task ends a wait with `CancellationError` (the spooler's body timeout
    /// cancels it).
    func next() async throws -> ByteBuffer? {
        let watchdog = BodyWatchdog.reading
        while true {
            switch try lock.withLock({ try step() }) {
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
                    lock.withLock { left(source) }
                    throw CancellationError()
                }
                if let chunk = try lock.withLock({ try took(result, from: source) }) { return chunk }
            }
        }
    }

    /// What to do now. Under `lock`.
    private func step() throws -> Step {
        switch phase {
        case .finished: return .end
        case .failed(let error, _): throw error
        case .feeding, .waiting:
            guard let source else { return .park }
            source.inUse = true
            return .read(source)
        }
    }

    /// Handles what `source` gave: returns a chunk to hand on, or nil to look again (the chunk of a request cut off
    /// meanwhile, an empty one, the end of a request's body: then the body has finished, or waits). Under `lock`.
    private func took(_ result: Result<ByteBuffer?, any Error>, from source: Source) throws -> ByteBuffer? {
        left(source)
        guard case .feeding(source.segment) = phase, self.source === source else {
            if case .failed(let error, _) = phase { throw error }
            return nil  // cut off: what it sent is not the upload's
        }
        switch result {
        case .success(.some(let chunk)):
            guard chunk.readableBytes > 0 else { return nil }
            received += Int64(chunk.readableBytes)
            // Bytes came: the window that ran stops, and the next wait starts one anew.
            timer?.cancel()
            timer = nil
            windowSpent = false
            return chunk
        case .success(.none):
            self.source = nil
            if source.completes {
                phase = .finished(segment: source.segment)
                lifeTimer?.cancel()
                lifeTimer = nil
            } else {
                wait()
            }
            release(source, .success(()))
            return nil
        case .failure(let error):
            self.source = nil
            wait()
            release(source, .failure(error))
            return nil
        }
    }

    /// The reader is out of `source`'s `next()`: a wait that ended meanwhile (the request was cut off, the upload
    /// failed) is let go now. Under `lock`.
    private func left(_ source: Source) {
        source.inUse = false
        if let outcome = source.outcome {
            source.outcome = nil
            release(source, outcome)
        }
    }

    /// Waits for a request to feed the body (or for it to end); the body timeout is paused while none is attached.
    private func park(_ watchdog: BodyWatchdog?) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (reader: CheckedContinuation<Void, any Error>) in
                lock.withLock {
                    switch phase {
                    case .finished, .failed: return reader.resume()
                    case .feeding, .waiting: if source != nil { return reader.resume() }
                    }
                    if Task.isCancelled { return reader.resume(throwing: CancellationError()) }
                    self.reader = reader
                    readerWatchdog = watchdog
                    if case .waiting = phase { pauseReader() }
                }
            }
        } onCancel: {
            lock.withLock { wakeReader(with: .failure(CancellationError())) }
        }
    }

    /// The waiting reader's body timeout stops counting the rate. Under `lock`.
    private func pauseReader() {
        guard !readerPaused else { return }
        readerPaused = true
        readerWatchdog?.pause()
    }

    /// Ends the reader's wait with `result`, if it waits, and lets its body timeout count again. Under `lock`.
    private func wakeReader(with result: Result<Void, any Error>) {
        guard let reader else { return }
        self.reader = nil
        if readerPaused { readerWatchdog?.resume() }
        readerPaused = false
        readerWatchdog = nil
        reader.resume(with: result)
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

    /// A request's body as the reader pulls it (its iterator is made, and used, by the reader's task alone), and
    /// the request's wait for it to be read.
    private final class Source: @unchecked Sendable {
        let segment: Int
        let completes: Bool
        let onSupersede: @Sendable () -> Void
        private let pull: () async throws -> ByteBuffer?
        /// The request's wait. Guarded by the body's lock, as the three below.
        var wait: CheckedContinuation<Void, any Error>?
        /// Whether the reader is inside `next()`.
        var inUse = false
        /// How the request's wait ends, once the reader leaves `next()`.
        var outcome: Result<Void, any Error>?

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
