/// A form of one file part of `size` bytes: the part's head, then slices of one 1 MiB random block, then the close
/// delimiter. Memory stays at the block whatever the size.
public struct OneFileForm: AsyncSequence, Sendable {
    public static let boundary = "----SpoolBenchmarkBoundary7MA4YWxkTrZu0gW"
    public static let contentType = "multipart/form-data; boundary=\(boundary)"
    public static let block: [UInt8] = {
        var state: UInt64 = 0x5EED
        return (0..<(1 << 20)).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }()
    public let size: Int

    public init(size: Int) { self.size = size }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let size: Int
        public var sent = -1  // -1: the head is next; size: the close is next; beyond: done

        public init(size: Int, sent: Int = -1) {
            self.size = size
            self.sent = sent
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> ArraySlice<UInt8>? { nextChunk() }
        public mutating func next() async -> ArraySlice<UInt8>? { nextChunk() }

        public mutating func nextChunk() -> ArraySlice<UInt8>? {
            if sent < 0 {
                sent = 0
                let head =
                    "--\(OneFileForm.boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n"
                    + "Content-Type: application/octet-stream\r\n\r\n"
                return Array(head.utf8)[...]
            }
            if sent == size {
                sent += 1
                return Array("\r\n--\(OneFileForm.boundary)--\r\n".utf8)[...]
            }
            guard sent < size else { return nil }
            let offset = sent % OneFileForm.block.count
            let count = Swift.min(65536, size - sent, OneFileForm.block.count - offset)
            sent += count
            return OneFileForm.block[offset..<(offset + count)]
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(size: size) }
}
