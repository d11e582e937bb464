import Foundation
package import NIOCore
import StreamingMultipart

/// One resumable upload's body as its route reads it (draft-ietf-httpbis-resumable-upload): the bytes of the request
/// that created the upload, then of each append, as one stream that pauses while the client reconnects. The parser,
/// the spooler and the store read it once, so nothing is parsed, hashed or stored twice, and limits count the form's
/// bytes once however often it resumed.
///
/// A request feeds it through ``append(from:_:completes:)``; its reader pulls (backpressure reaches the sending
/// socket). ``offset`` is what the reader has taken: the `Upload-Offset` the server answers.
///
/// States, one lock:
///
/// | event | feeding (one request attached) | waiting (no request) | finished, failed |
/// |---|---|---|---|
/// | an append from ``offset`` | the old request is cut off; feeding the new | feeding | refused: ended |
/// | an append from another offset | refused: conflict, the upload kept | refused: conflict | refused: ended |
/// | the request's bytes end, it completes the upload | finished: the reader reads the end | | |
/// | the request's bytes end otherwise, or it fails | waiting, the window starts | | |
/// | the window passes | | failed: abandoned | |
/// | ``cancel()`` or the reader goes away | failed | failed | |
package final class ResumableBody: AsyncSequence, @unchecked Sendable {
    package typealias Element = ByteBuffer

    /// Why an append was refused.
    package enum Refusal: Error, Equatable {
        /// The append's offset is not the server's: answer 409 with this one. The upload is kept.
        case conflict(offset: Int64)
        /// The upload is over (finished, failed, cancelled, abandoned): answer 404.
        case ended
        /// A newer append took the upload over while this one was feeding it.
        case superseded
    }

    private enum Phase {
        case feeding(segment: Int)
        case waiting
        case finished
        case failed(any Error)
    }

    /// How long the body waits for the client to resume before it fails as abandoned.
    package let window: Duration

    private let lock = NSLock()
    private var phase = Phase.waiting  // guarded by `lock`
    private var taken: Int64 = 0  // guarded by `lock`
    private var segments = 0  // guarded by `lock`
    /// A chunk a request offers and the reader has not taken, with the request's wait for it to be taken.
    private var offered: (chunk: ByteBuffer, segment: Int, wait: CheckedContinuation<Void, any Error>)?  // `lock`
    /// The reader's wait for a chunk.
    private var reader: CheckedContinuation<ByteBuffer?, any Error>?  // guarded by `lock`
    private var timer: Task<Void, Never>?  // guarded by `lock`

    /// - Parameter window: how long a paused upload waits for the client (default 5 minutes): then the reader's
    ///   next chunk fails with ``StreamingMultipart/MultipartError/Code/timedOut``.
    package init(window: Duration = .seconds(300)) {
        self.window = window
    }

    /// The bytes the reader has taken: where the next append must start.
    package var offset: Int64 { lock.withLock { taken } }

    /// Whether the body has ended, whole (the reader read its end) or not.
    package var isOver: Bool {
        lock.withLock {
            switch phase {
            case .finished, .failed: true
            case .feeding, .waiting: false
            }
        }
    }

    // MARK: Requests

    /// Feeds the body from `offset` with `chunks`, a request's body, until they end: the creation request from 0,
    /// each append from where the reader got to. Returns when the request's bytes are all taken by the reader.
    ///
    /// - Parameter completes: whether the request's end is the upload's end (`Upload-Complete: ?1`); otherwise the
    ///   body waits for the next append.
    /// - Throws: a ``Refusal``; the request's own error (its connection dropped): the body then waits for the client
    ///   to resume, within ``window``.
    package func append<Chunks: AsyncSequence>(
        from offset: Int64, _ chunks: Chunks, completes: Bool
    ) async throws where Chunks.Element == ByteBuffer {
        let segment = try attach(from: offset)
        do {
            for try await chunk in chunks where chunk.readableBytes > 0 {
                try await deliver(chunk, from: segment)
            }
        } catch let refusal as Refusal {
            throw refusal
        } catch {
            detach(segment, completing: false)
            throw error
        }
        detach(segment, completing: completes)
    }

    /// Ends the upload now (the client's `DELETE`, the server shutting down): the reader's next chunk throws
    /// ``StreamingMultipart/MultipartError/Code/cancelled``, and appends are refused.
    package func cancel() {
        fail(MultipartError(code: .cancelled, message: "the upload was cancelled before its end"))
    }

    private func attach(from offset: Int64) throws -> Int {
        try lock.withLock {
            switch phase {
            case .finished, .failed: throw Refusal.ended
            case .feeding, .waiting: break
            }
            guard offset == taken else { throw Refusal.conflict(offset: taken) }
            if let offered {  // the request feeding it now is cut off; the reader never took its chunk
                self.offered = nil
                offered.wait.resume(throwing: Refusal.superseded)
            }
            segments += 1
            phase = .feeding(segment: segments)
            timer?.cancel()
            timer = nil
            return segments
        }
    }

    /// Hands `chunk` to the reader, waiting until it takes it.
    private func deliver(_ chunk: ByteBuffer, from segment: Int) async throws {
        try await withCheckedThrowingContinuation { (wait: CheckedContinuation<Void, any Error>) in
            lock.withLock {
                guard case .feeding(segment) = phase else {
                    if case .failed = phase { return wait.resume(throwing: Refusal.ended) }
                    return wait.resume(throwing: Refusal.superseded)
                }
                if let reader {
                    self.reader = nil
                    taken += Int64(chunk.readableBytes)
                    reader.resume(returning: chunk)
                    wait.resume()
                } else {
                    offered = (chunk, segment, wait)
                }
            }
        }
    }

    /// The request of `segment` ended: the upload ends with it, or waits for the next.
    private func detach(_ segment: Int, completing: Bool) {
        lock.withLock {
            guard case .feeding(segment) = phase else { return }
            if completing {
                phase = .finished
                if let reader {
                    self.reader = nil
                    reader.resume(returning: nil)
                }
            } else {
                phase = .waiting
                startWindow()
            }
        }
    }

    /// Fails the body as abandoned once the window passes without an append. Under `lock`.
    private func startWindow() {
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
        phase = .failed(error)
        timer?.cancel()
        timer = nil
        if let reader {
            self.reader = nil
            reader.resume(throwing: error)
        }
        if let offered {
            self.offered = nil
            offered.wait.resume(throwing: Refusal.ended)
        }
    }

    // MARK: The reader

    /// The next chunk, nil at the end; waits while the upload is paused.
    func next() async throws -> ByteBuffer? {
        try await withCheckedThrowingContinuation { (reader: CheckedContinuation<ByteBuffer?, any Error>) in
            lock.withLock {
                if let offered {
                    self.offered = nil
                    taken += Int64(offered.chunk.readableBytes)
                    reader.resume(returning: offered.chunk)
                    offered.wait.resume()
                    return
                }
                switch phase {
                case .finished: reader.resume(returning: nil)
                case .failed(let error): reader.resume(throwing: error)
                case .feeding, .waiting: self.reader = reader
                }
            }
        }
    }

    /// The reader will read no more (its route answered, or failed): appends are refused from now on.
    func readerWentAway() {
        fail(MultipartError(code: .cancelled, message: "the upload's reader stopped before its end"))
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
