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
        /// The body's byte each iteration starts at (``MultipartBody/makeReader(startingAt:)``): 0 but for a resumed
        /// upload, which is never compressed.
        let startOffset: Int64

        /// The settings of one of the body's sequences; `size` is at least 1, and at most the throttle's packet.
        /// A `startOffset` above 0 takes no compression: its first `next()` throws
        /// ``MultipartError/Code/cannotResume`` with one, and what ``MultipartBody/makeReader(startingAt:)`` throws.
        package init(
            body: MultipartBody, size: Int, compression: Compression?, throttle: Throttle?,
            progress: (@Sendable (Progress) -> Void)?, startOffset: Int64
        ) {
            self.body = body
            self.size = Swift.max(1, Swift.min(size, throttle?.packetSize ?? size))
            self.compression = compression
            self.throttle = throttle
            self.progress = progress
            self.startOffset = startOffset
        }

        /// The settings of one of the body's sequences from its start.
        package init(
            body: MultipartBody, size: Int, compression: Compression?, throttle: Throttle?,
            progress: (@Sendable (Progress) -> Void)?
        ) {
            self.init(
                body: body, size: size, compression: compression, throttle: throttle, progress: progress, startOffset: 0
            )
        }

        /// The exact length of what an iteration produces (the body's, less `startOffset`), or nil when a part's
        /// length is unknown or the body is compressed.
        package var contentLength: Int64? { compression == nil ? body.contentLength.map { $0 - startOffset } : nil }

        /// A reader for one iteration.
        func makeReader() throws(MultipartError) -> BodyReader {
            guard startOffset != 0 else { return body.makeReader(compression: compression) }
            guard compression == nil else {
                throw MultipartError(
                    code: .cannotResume, message: "a compressed body cannot be read from offset \(startOffset)",
                    offset: startOffset)
            }
            return try body.makeReader(startingAt: startOffset)
        }

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
        private let reader = ReaderBox()
        private var pausesBeforeNext = false

        init(transfer: Transfer) {
            self.transfer = transfer
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
                reader.value?.close()
                throw error
            }
            if reader.value == nil { reader.value = try transfer.makeReader() }  // files open at the first chunk
            let size = transfer.size
            let (chunk, progress) = try reader.access { reader in (try read(size, &reader), reader.progress) }
            guard let chunk else { return nil }
            transfer.progress?(progress)
            pausesBeforeNext = transfer.throttle != nil
            return chunk
        }
    }
}

/// A ``BodyReader`` in a box, for the places that must be copyable (an async iterator); nil until the first read.
final class ReaderBox {
    var value: BodyReader?

    /// `body` given the reader, which must be there.
    func access<Result>(_ body: (inout BodyReader) throws -> Result) rethrows -> Result { try body(&value!) }
}
