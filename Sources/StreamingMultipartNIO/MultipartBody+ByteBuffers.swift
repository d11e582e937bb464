public import NIOCore
public import StreamingMultipart

extension MultipartBody {
    /// The body as an async sequence of `ByteBuffer`s, with its length, for AsyncHTTPClient and other NIO
    /// transports.
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
    /// request.body = .stream(buffers, length: buffers.length.map { .known($0) } ?? .unknown)
    /// ```
    ///
    /// Each iteration produces the whole body again, so a retry can send it anew. The bytes are read straight into
    /// each buffer's storage (no intermediate array); files with blocking reads of at most `size` bytes, which
    /// the page cache serves in microseconds. Cancelling the task (or dropping the iterator) closes every file and
    /// stream the iteration opened.
    ///
    /// - Parameters:
    ///   - size: the most bytes in one buffer; at least 1.
    ///   - compression: compresses the body as it is read (send `Content-Encoding` too); ``MultipartByteBuffers/length``
    ///     is then nil.
    ///   - allocator: where the buffers come from: the channel's allocator when there is one.
    public func byteBuffers(
        size: Int = 64 * 1024, compression: Compression? = nil, allocator: ByteBufferAllocator = ByteBufferAllocator()
    ) -> MultipartByteBuffers {
        MultipartByteBuffers(body: self, size: Swift.max(1, size), compression: compression, allocator: allocator)
    }
}

/// A ``StreamingMultipart/MultipartBody`` as `ByteBuffer`s; see
/// ``StreamingMultipart/MultipartBody/byteBuffers(size:compression:allocator:)``.
public struct MultipartByteBuffers: AsyncSequence, Sendable {
    public typealias Element = ByteBuffer

    let body: MultipartBody
    let size: Int
    let compression: MultipartBody.Compression?
    let allocator: ByteBufferAllocator

    /// The body's exact length in bytes, or nil when a part's length is unknown or the body is compressed: for
    /// AsyncHTTPClient, `.known(length)` or `.unknown`.
    public var length: Int64? { compression == nil ? body.contentLength : nil }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(
            reader: Reader(body.makeReader(compression: compression)), size: size, allocator: allocator)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let reader: Reader
        let size: Int
        let allocator: ByteBufferAllocator

        /// The next buffer of at most `size` bytes, or nil after the last.
        ///
        /// - Throws: what ``StreamingMultipart/BodyReader/read(into:)`` throws; `CancellationError`.
        public mutating func next() async throws -> ByteBuffer? { try nextBuffer() }

        /// The next buffer, read on the caller's actor (SE-0421): no hop to the global executor and back.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> ByteBuffer? {
            try nextBuffer()
        }

        private mutating func nextBuffer() throws -> ByteBuffer? {
            try Task.checkCancellation()
            var buffer = allocator.buffer(capacity: size)
            let count = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { free in
                try reader.read(into: UnsafeMutableRawBufferPointer(rebasing: free.prefix(size)))
            }
            return count == 0 ? nil : buffer
        }
    }

    /// The one reader an iterator and its copies share (a `BodyReader` owns open files and cannot be copied).
    final class Reader {
        private var reader: BodyReader

        init(_ reader: consuming BodyReader) { self.reader = reader }

        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try reader.read(into: buffer) }
    }
}
