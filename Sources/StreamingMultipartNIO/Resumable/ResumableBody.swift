import Foundation
package import NIOCore
import StreamingMultipart

/// One resumable upload's body as its route reads it (draft-ietf-httpbis-resumable-upload): the bytes of the request
/// that created the upload, then of each append, as one stream that pauses while the client reconnects. The parser,
/// the spooler and the store read it once, so nothing is parsed, hashed or stored twice, and limits count the form's
/// bytes once however often it resumed.
///
/// A request feeds it (``attach(from:)``, then ``feed(_:_:completes:)``); its reader pulls. Between them sits a
/// queue of at most ``bufferBytes`` (plus one chunk): the sender runs that far ahead of the reader and then waits, so
/// backpressure reaches its socket and the two tasks do not hand over every chunk one by one. ``offset`` counts the
/// bytes the body took, queued or read: the `Upload-Offset` the server answers.
///
/// States, one lock:
///
/// | event | feeding (one request attached) | waiting (no request) | finished, failed |
/// |---|---|---|---|
/// | an append from ``offset`` | the old request is cut off; feeding the new | feeding | refused: ended |
/// | an append from another offset | refused: conflict, the upload kept | refused: conflict | refused: ended |
/// | ``takeOver()`` (the client asks the offset) | the request is cut off; waiting | | |
/// | the request's bytes end, it completes the upload | finished: the reader reads the end | | |
/// | the request's bytes end otherwise, or it fails | waiting, the window starts | | |
/// | the window passes | | failed: abandoned | |
/// | ``cancel()`` or the reader goes away | failed | failed | |
///
/// While the body waits for a request, its reader's body timeout (the spooler's ``MultipartBodyTimeout``) does not
/// count the rate: the client is reconnecting, and the window bounds that wait instead. A deadline still counts.
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

    /// How long the body waits for the client to resume before it fails as abandoned.
    package let window: Duration
    /// How far a sender may run ahead of the reader, in bytes.
    package let bufferBytes: Int

    private let lock = NSLock()
    private var phase = Phase.waiting  // guarded by `lock`
    private var received: Int64 = 0  // guarded by `lock`
    private var segments = 0  // guarded by `lock`
    private var queue = CircularBuffer<ByteBuffer>()  // guarded by `lock`
    private var queued = 0  // guarded by `lock`
    /// The sender's wait for room in the queue.
    private var sender: (segment: Int, wait: CheckedContinuation<Void, any Error>)?  // guarded by `lock`
    /// The reader's wait for a chunk, with its body timeout, and whether that timeout is paused for it.
    private var reader: CheckedContinuation<ByteBuffer?, any Error>?  // guarded by `lock`
    private var readerWatchdog: BodyWatchdog?  // guarded by `lock`
    private var readerPaused = false  // guarded by `lock`
    private var timer: Task<Void, Never>?  // guarded by `lock`

    /// - Parameters:
    ///   - window: how long a paused upload waits for the client (default 5 minutes): then the reader's next chunk
    ///     fails with ``StreamingMultipart/MultipartError/Code/timedOut``.
    ///   - bufferBytes: how far a sender may run ahead of the reader (default 512 KiB).
    package init(window: Duration = .seconds(300), bufferBytes: Int = 512 * 1024) {
        self.window = window
        self.bufferBytes = Swift.max(1, bufferBytes)
    }

    /// The bytes the body has taken: where the next append must start.
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
    /// ``feed(_:_:completes:)``.
    package func append<Chunks: AsyncSequence>(
        from offset: Int64, _ chunks: Chunks, completes: Bool
    ) async throws where Chunks.Element == ByteBuffer {
        try await feed(try attach(from: offset), chunks, completes: completes)
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
            cutOffSender()
            segments += 1
            phase = .feeding(segment: segments)
            timer?.cancel()
            timer = nil
            return segments
        }
    }

    /// Feeds the body with `chunks` as request `segment` until they end. Returns when they are all taken.
    ///
    /// - Parameter completes: whether the request's end is the upload's end (`Upload-Complete: ?1`); otherwise the
    ///   body waits for the next append.
    /// - Throws: a ``Refusal``; the request's own error (its connection dropped): the body then waits for the client
    ///   to resume, within ``window``.
    package func feed<Chunks: AsyncSequence>(
        _ segment: Int, _ chunks: Chunks, completes: Bool
    ) async throws where Chunks.Element == ByteBuffer {
        do {
            for try await chunk in chunks where chunk.readableBytes > 0 {
                if try deliver(chunk, from: segment) { try await waitForRoom(segment) }
            }
        } catch let refusal as Refusal {
            throw refusal
        } catch {
            detach(segment)
            throw error
        }
        try lock.withLock {
            guard case .feeding(segment) = phase else { throw phaseRefusal() }
            if completes {
                phase = .finished(segment: segment)
                if queue.isEmpty { wakeReader(with: .success(nil)) }
            } else {
                wait()
            }
        }
    }

    /// The client asks where the upload got to (`HEAD`): the request feeding it now adds nothing more, so the
    /// offset answered is the one the next append must start from.
    package func takeOver() {
        lock.withLock {
            guard case .feeding = phase else { return }
            cutOffSender()
            wait()
        }
    }

    /// Ends the upload now (the client's `DELETE`, the server shutting down): the reader's next chunk throws
    /// ``StreamingMultipart/MultipartError/Code/cancelled``, and appends are refused.
    package func cancel() {
        fail(MultipartError(code: .cancelled, message: "the upload was cancelled before its end"))
    }

    /// The reader will read no more (its route answered, or failed): appends are refused from now on.
    package func readerWentAway() {
        fail(MultipartError(code: .cancelled, message: "the upload's reader stopped before its end"))
    }

    /// Takes `chunk` from request `segment`: to the waiting reader, or into the queue. Returns whether the queue is
    /// now full, so the sender must wait for room.
    private func deliver(_ chunk: ByteBuffer, from segment: Int) throws -> Bool {
        try lock.withLock {
            guard case .feeding(segment) = phase else { throw phaseRefusal() }
            received += Int64(chunk.readableBytes)
            if reader != nil {
                wakeReader(with: .success(chunk))
                return false
            }
            queue.append(chunk)
            queued += chunk.readableBytes
            return queued >= bufferBytes
        }
    }

    /// Waits until the reader has taken the queue down to half of ``bufferBytes``.
    private func waitForRoom(_ segment: Int) async throws {
        try await withCheckedThrowingContinuation { (wait: CheckedContinuation<Void, any Error>) in
            lock.withLock {
                guard case .feeding(segment) = phase else { return wait.resume(throwing: phaseRefusal()) }
                if queued <= bufferBytes / 2 { return wait.resume() }
                sender = (segment, wait)
            }
        }
    }

    /// The refusal for a request that no longer feeds the body: a later request or ``takeOver()`` cut it off, or
    /// the upload ended. Under `lock`.
    private func phaseRefusal() -> Refusal {
        if case .failed = phase { return .ended }
        return .superseded
    }

    /// The request that fed the body is cut off: its wait for room ends. Under `lock`.
    private func cutOffSender() {
        if let sender {
            self.sender = nil
            sender.wait.resume(throwing: Refusal.superseded)
        }
    }

    /// The request of `segment` failed: the upload waits for the next.
    private func detach(_ segment: Int) {
        lock.withLock {
            guard case .feeding(segment) = phase else { return }
            wait()
        }
    }

    /// No request feeds the body: the window starts, and a reader already waiting stops counting the rate. Under
    /// `lock`.
    private func wait() {
        phase = .waiting
        if reader != nil { pauseReader() }
        timer?.cancel()
        let window = window
        timer = Task { [weak self] in
            do {
                try await Task.sleep(for: window)
            } catch {
                return  // an append came
            }
            self?.abandon()
        }
    }

    private func abandon() {
        let seconds = window.components.seconds
        let error = MultipartError(
            code: .timedOut,
            message: "the upload was abandoned: the client did not resume it within \(seconds) s of its last bytes")
        lock.withLock {
            guard case .waiting = phase else { return }
            failLocked(error)
        }
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
        queue.removeAll()
        queued = 0
        wakeReader(with: .failure(error))
        if let sender {
            self.sender = nil
            sender.wait.resume(throwing: Refusal.ended)
        }
    }

    // MARK: The reader

    /// The next chunk, nil at the end; waits while the upload is paused. Cancelling the reading task ends a wait
    /// with `CancellationError` (the spooler's body timeout cancels it).
    func next() async throws -> ByteBuffer? {
        let watchdog = BodyWatchdog.reading
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (reader: CheckedContinuation<ByteBuffer?, any Error>) in
                lock.withLock {
                    if let chunk = queue.popFirst() {
                        queued -= chunk.readableBytes
                        if let sender, queued <= bufferBytes / 2 {
                            self.sender = nil
                            sender.wait.resume()
                        }
                        return reader.resume(returning: chunk)
                    }
                    switch phase {
                    case .finished: return reader.resume(returning: nil)
                    case .failed(let error, _): return reader.resume(throwing: error)
                    case .feeding, .waiting: break
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

    /// Hands `result` to the waiting reader, if any, and lets its body timeout count again. Under `lock`.
    private func wakeReader(with result: Result<ByteBuffer?, any Error>) {
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
}
