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
    /// blocking reads of at most `size` bytes, which the page cache serves in microseconds.
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
            body: self, chunkSize: max(1, min(size, throttle?.packetSize ?? size)), compression: compression,
            throttle: throttle, progress: progress)
    }
}

extension MultipartBody {
    /// A body as an async sequence of `[UInt8]` chunks; see ``MultipartBody/chunks(size:compression:throttle:progress:)``.
    public struct Chunks: AsyncSequence, Sendable {
        public typealias Element = [UInt8]

        let body: MultipartBody
        let chunkSize: Int
        let compression: Compression?
        let throttle: Throttle?
        let progress: (@Sendable (Progress) -> Void)?

        /// The body's exact length, or nil when some part's length is unknown; for transports that take a length.
        public var contentLength: Int64? { compression == nil ? body.contentLength : nil }

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(
                reader: ReaderBox(body.makeReader(compression: compression)), chunkSize: chunkSize, throttle: throttle,
                progress: progress)
        }

        /// Reads one chunk per `next()`. Copies of an iterator share its reader (and so its position): a `BodyReader`
        /// owns open files and cannot be copied.
        public struct AsyncIterator: AsyncIteratorProtocol {
            let reader: ReaderBox
            let chunkSize: Int
            let throttle: Throttle?
            let progress: (@Sendable (Progress) -> Void)?
            var pausesBeforeNext = false

            public mutating func next() async throws -> [UInt8]? {
                do {
                    try Task.checkCancellation()
                    if pausesBeforeNext, let throttle { try await Task.sleep(for: throttle.delay) }
                } catch {
                    reader.value.close()
                    throw error
                }
                var chunk = [UInt8](repeating: 0, count: chunkSize)
                let count = try chunk.withUnsafeMutableBytes { try reader.value.read(into: $0) }
                guard count > 0 else { return nil }
                chunk.removeSubrange(count...)
                progress?(reader.value.progress)
                pausesBeforeNext = throttle != nil
                return chunk
            }
        }
    }
}

/// A ``BodyReader`` in a box, for the places that must be copyable (an async iterator).
final class ReaderBox {
    var value: BodyReader

    init(_ value: consuming BodyReader) { self.value = value }
}
