extension MultipartBody {
    /// The body as an async sequence of byte chunks, for async transports (AsyncHTTPClient, NIO, custom sockets).
    ///
    /// ```swift
    /// for try await chunk in body.chunks() {
    ///     try await connection.write(chunk)
    /// }
    /// ```
    ///
    /// Each iteration produces the whole body again. Cancelling the task (or dropping the iterator) closes every
    /// file and stream the iteration opened; a cancelled `next()` throws `CancellationError`. Files are read with
    /// blocking reads of at most `size` bytes on the iterating task, which the page cache serves in microseconds.
    /// `StreamingMultipartNIO`'s `byteBuffers` is the same sequence with `ByteBuffer` chunks.
    ///
    /// - Parameters:
    ///   - size: the most bytes in one chunk (the last is shorter); at least 1.
    ///   - compression: compresses the body as it is read; the chunks' `contentLength` is then nil.
    ///   - throttle: at most `throttle.packetSize` bytes per chunk, then `Task.sleep(for: throttle.delay)`.
    ///   - progress: called after each chunk.
    public func chunks(
        size: Int = 64 * 1024, compression: Compression? = nil, throttle: Throttle? = nil,
        progress: (@Sendable (Progress) -> Void)? = nil
    ) -> MultipartBody.Chunks {
        Chunks(
            transfer: Transfer(body: self, size: size, compression: compression, throttle: throttle, progress: progress)
        )
    }
}

extension MultipartBody {
    /// A body as an async sequence of `[UInt8]` chunks; see
    /// ``MultipartBody/chunks(size:compression:throttle:progress:)``.
    public struct Chunks: AsyncSequence, Sendable {
        public typealias Element = [UInt8]

        let transfer: Transfer

        /// The body's exact length, or nil when some part's length is unknown or the body is compressed; for
        /// transports that take a length.
        public var contentLength: Int64? { transfer.contentLength }

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(pump: transfer.makePump()) }

        /// Reads one chunk per `next()`. Copies of an iterator share its reader (and so its position): a `BodyReader`
        /// owns open files and cannot be copied.
        public struct AsyncIterator: AsyncIteratorProtocol {
            var pump: Pump

            public mutating func next() async throws -> [UInt8]? {
                try await pump.next(isolation: nil, Self.chunk)
            }

            /// The next chunk, read on the caller's actor (SE-0421): no hop to the global executor and back.
            public mutating func next(isolation actor: isolated (any Actor)?) async throws -> [UInt8]? {
                try await pump.next(isolation: actor, Self.chunk)
            }

            private static func chunk(size: Int, reader: inout BodyReader) throws -> [UInt8]? {
                let chunk = try [UInt8](capacity: size) { _ = try reader.read(into: &$0) }
                return chunk.isEmpty ? nil : chunk
            }
        }
    }

    /// What a body's async sequences share, whatever their chunk type: the body, the chunk size, compression,
    /// throttling and progress. `StreamingMultipartNIO` builds its `ByteBuffer` sequence on it (hence `package`).
    package struct Transfer: Sendable {
        let body: MultipartBody
        let size: Int
        let compression: Compression?
        let throttle: Throttle?
        let progress: (@Sendable (Progress) -> Void)?

        /// The settings of one of the body's sequences; `size` is at least 1, and at most the throttle's packet.
        package init(
            body: MultipartBody, size: Int, compression: Compression?, throttle: Throttle?,
            progress: (@Sendable (Progress) -> Void)?
        ) {
            self.body = body
            self.size = Swift.max(1, Swift.min(size, throttle?.packetSize ?? size))
            self.compression = compression
            self.throttle = throttle
            self.progress = progress
        }

        /// The body's exact length, or nil when a part's length is unknown or the body is compressed.
        package var contentLength: Int64? { compression == nil ? body.contentLength : nil }

        /// A new pump: one iteration of the body from its start.
        package func makePump() -> Pump { Pump(transfer: self) }
    }

    /// One iteration of a body, for an async iterator: one reader its copies share (a ``BodyReader`` owns open
    /// files and cannot be copied), and the one rule every chunk type follows. Each `next` checks for
    /// cancellation, closing the reader's files and streams before it throws `CancellationError`; waits out the
    /// throttle's pause after the previous chunk; lets the caller read one chunk of at most `size` bytes; and
    /// reports progress.
    package struct Pump {
        let transfer: Transfer
        private let reader: ReaderBox
        private var pausesBeforeNext = false

        init(transfer: Transfer) {
            self.transfer = transfer
            reader = ReaderBox(transfer.body.makeReader(compression: transfer.compression))
        }

        /// The next chunk, or nil after the last: `read` is given the most bytes the chunk may hold and the reader
        /// to fill it from, and returns nil when the reader gave no bytes.
        ///
        /// - Throws: `CancellationError`; what ``BodyReader``'s `read(into:)` and `read` throw.
        package mutating func next<Chunk>(
            isolation actor: isolated (any Actor)?, _ read: (_ size: Int, _ reader: inout BodyReader) throws -> Chunk?
        ) async throws -> Chunk? {
            do {
                try Task.checkCancellation()
                if pausesBeforeNext, let throttle = transfer.throttle { try await Task.sleep(for: throttle.delay) }
            } catch {
                reader.value.close()
                throw error
            }
            guard let chunk = try read(transfer.size, &reader.value) else { return nil }
            transfer.progress?(reader.value.progress)
            pausesBeforeNext = transfer.throttle != nil
            return chunk
        }
    }
}

/// A ``BodyReader`` in a box, for the places that must be copyable (an async iterator).
final class ReaderBox {
    var value: BodyReader

    init(_ value: consuming BodyReader) { self.value = value }
}
