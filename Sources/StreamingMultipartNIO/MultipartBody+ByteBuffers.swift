public import NIOCore
public import StreamingMultipart

extension MultipartBody {
    /// The body as an async sequence of `ByteBuffer`s, with its length, for AsyncHTTPClient and other NIO
    /// transports: `MultipartBody.chunks(size:compression:throttle:progress:)` with
    /// `ByteBuffer` chunks, the same in everything else (cancellation, throttling, progress, `next(isolation:)`).
    ///
    /// ```swift
    /// import AsyncHTTPClient
    /// import StreamingMultipart
    /// import StreamingMultipartNIO
    ///
    /// var request = HTTPClientRequest(url: "https://example.com/upload")
    /// request.method = .POST
    /// request.headers.add(name: "Content-Type", value: body.contentType)
    /// let buffers = body.byteBuffers()
    /// request.body = .stream(buffers, length: buffers.contentLength.map { .known($0) } ?? .unknown)
    /// ```
    ///
    /// Each iteration produces the whole body again, so a retry can send it anew. The bytes are read straight into
    /// each buffer's storage (no intermediate array); files with blocking reads of at most `size` bytes on the
    /// iterating task, which the page cache serves in microseconds. The iterator keeps the last three buffers and
    /// reads into one again once its consumer has let go of it (a channel has written it), so that the bytes go
    /// into memory still in the CPU's caches rather than a new allocation; a buffer the consumer still holds keeps
    /// its bytes (a `ByteBuffer` copies on write). Cancelling the task (or dropping the iterator) closes every file
    /// and stream the iteration opened.
    ///
    /// - Parameters:
    ///   - size: the most bytes in one buffer; at least 1.
    ///   - compression: compresses the body as it is read (send `Content-Encoding` too);
    ///     ``MultipartBody/ByteBuffers/contentLength`` is then nil.
    ///   - throttle: at most `throttle.packetSize` bytes per buffer, then `Task.sleep(for: throttle.delay)`.
    ///   - progress: called after each buffer.
    ///   - allocator: where the buffers come from: the channel's allocator when there is one.
    public func byteBuffers(
        size: Int = 64 * 1024, compression: Compression? = nil, throttle: Throttle? = nil,
        progress: (@Sendable (Progress) -> Void)? = nil, allocator: ByteBufferAllocator = ByteBufferAllocator()
    ) -> ByteBuffers {
        ByteBuffers(
            transfer: Transfer(
                body: self, size: size, compression: compression, throttle: throttle, progress: progress),
            allocator: allocator)
    }

    /// The body from byte `offset` on (``StreamingMultipart/MultipartBody/makeReader(startingAt:)``), uncompressed:
    /// what a resumed upload sends. Its `contentLength` is what is left, and progress counts from `offset`; the first
    /// `next()` throws what `makeReader(startingAt:)` throws.
    package func byteBuffers(
        startingAt offset: Int64, size: Int = 64 * 1024, throttle: Throttle? = nil,
        progress: (@Sendable (Progress) -> Void)? = nil, allocator: ByteBufferAllocator = ByteBufferAllocator()
    ) -> ByteBuffers {
        ByteBuffers(
            transfer: Transfer(
                body: self, size: size, compression: nil, throttle: throttle, progress: progress, startOffset: offset),
            allocator: allocator)
    }

    /// A body as `ByteBuffer`s; see
    /// ``StreamingMultipart/MultipartBody/byteBuffers(size:compression:throttle:progress:allocator:)``.
    public struct ByteBuffers: AsyncSequence, Sendable {
        public typealias Element = ByteBuffer

        let transfer: Transfer
        let allocator: ByteBufferAllocator

        /// The body's exact length in bytes, or nil when a part's length is unknown or the body is compressed: for
        /// AsyncHTTPClient, `.known(length)` or `.unknown`.
        public var contentLength: Int64? { transfer.contentLength }

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(pump: transfer.makePump(), allocator: allocator)
        }

        /// Reads one buffer per `next()`. Copies of an iterator share its reader (and so its position).
        public struct AsyncIterator: AsyncIteratorProtocol {
            var pump: Pump
            let allocator: ByteBufferAllocator
            /// The last buffers handed out, oldest first, to be filled again once their consumer let go of them.
            var handedOut: [ByteBuffer] = []

            /// The next buffer of at most `size` bytes, or nil after the last.
            ///
            /// - Throws: what `BodyReader.read(into:)` throws; `CancellationError`.
            public mutating func next() async throws -> ByteBuffer? {
                try await next(isolation: nil)
            }

            /// The next buffer, read on the caller's actor (SE-0421): no hop to the global executor and back.
            public mutating func next(isolation actor: isolated (any Actor)?) async throws -> ByteBuffer? {
                let allocator = self.allocator
                var handedOut = self.handedOut
                self.handedOut = []
                defer { self.handedOut = handedOut }
                return try await pump.next(isolation: actor) {
                    try Self.buffer(size: $0, reader: &$1, allocator, reusing: &handedOut)
                }
            }

            /// How many buffers are kept for reuse: a channel holds the last one or two until they are written.
            static let reused = 3

            private static func buffer(
                size: Int, reader: inout BodyReader, _ allocator: ByteBufferAllocator,
                reusing handedOut: inout [ByteBuffer]
            ) throws -> ByteBuffer? {
                var buffer: ByteBuffer
                if handedOut.count == reused {
                    buffer = handedOut.removeFirst()
                    buffer.clear(minimumCapacity: size)
                } else {
                    buffer = allocator.buffer(capacity: size)
                }
                try buffer.writeWithOutputRawSpan(minimumWritableBytes: size) {
                    _ = try reader.read(into: &$0, atMost: size)
                }
                guard buffer.readableBytes > 0 else { return nil }
                handedOut.append(buffer)
                return buffer
            }
        }
    }
}
