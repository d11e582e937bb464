/// A body in memory as an async sequence of chunks (slices, no copies) that never suspends: a server's request
/// body whose bytes have all arrived, so that a benchmark times the layer above it and not a transport.
public struct MemoryChunks: AsyncSequence, Sendable {
    public let bytes: [UInt8]
    public let chunkSize: Int

    public init(_ bytes: [UInt8], chunkSize: Int = 65536) {
        self.bytes = bytes
        self.chunkSize = chunkSize
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(bytes: bytes, chunkSize: chunkSize) }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let bytes: [UInt8]
        let chunkSize: Int
        var offset = 0

        public mutating func next(isolation actor: isolated (any Actor)?) async -> ArraySlice<UInt8>? {
            nextChunk()
        }

        public mutating func next() async -> ArraySlice<UInt8>? { nextChunk() }

        /// The next chunk, synchronously (for the sans-I/O baseline on the same slices).
        public mutating func nextChunk() -> ArraySlice<UInt8>? {
            guard offset < bytes.count else { return nil }
            let end = Swift.min(offset + chunkSize, bytes.count)
            defer { offset = end }
            return bytes[offset..<end]
        }
    }
}
