extension MultipartBody {
    /// How a body is compressed as it is read: gzip or deflate (zlib-wrapped, as RFC 9110 defines
    /// `Content-Encoding: deflate`) at a zlib level.
    ///
    /// ```swift
    /// request.setMultipartBody(body, compression: .gzip)             // Content-Encoding: gzip, sent chunked
    /// let length = try body.write(to: spool, compression: .gzip)     // the exact compressed length
    /// ```
    public struct Compression: Sendable, Hashable {
        /// The format written: gzip or zlib.
        let format: CompressionFormat
        /// zlib's level, 0 (stored) to 9 (smallest); 6 is zlib's default, 1 the fastest.
        public let level: Int

        /// gzip at level 6.
        public static let gzip = Compression(format: .gzip, level: 6)
        /// deflate (zlib-wrapped) at level 6.
        public static let deflate = Compression(format: .zlib, level: 6)

        /// gzip at `level`, clamped to 0…9.
        public static func gzip(level: Int) -> Compression { Compression(format: .gzip, level: level) }
        /// deflate (zlib-wrapped) at `level`, clamped to 0…9.
        public static func deflate(level: Int) -> Compression { Compression(format: .zlib, level: level) }

        private init(format: CompressionFormat, level: Int) {
            self.format = format
            self.level = Swift.min(Swift.max(level, 0), 9)
        }

        /// The `Content-Encoding` header value: `gzip` or `deflate`.
        public var contentEncoding: String { format == .gzip ? "gzip" : "deflate" }
    }
}

/// A reader's compressor and the block of body bytes it compresses from. A class, so that a `BodyReader` can hold
/// it as an optional and reach the noncopyable compressor inside without moving it.
final class CompressionStage {
    private var compressor: ZlibCompressor
    /// The body's bytes read but not yet compressed: `block[start...]`.
    private var block: [UInt8] = []
    private var start = 0
    private(set) var inputEnded = false
    private(set) var isFinished = false

    init(_ compression: MultipartBody.Compression) throws {
        compressor = try ZlibCompressor(format: compression.format, level: compression.level)
        block.reserveCapacity(BodyReader.blockSize)
    }

    /// Whether every byte read so far has gone to zlib.
    var isDrained: Bool { start == block.count }

    /// Replaces the (drained) block with the body's next bytes, which `read` appends (up to a block); reading none
    /// is the end of the body.
    func refill(_ read: (inout OutputRawSpan) throws -> Int) rethrows {
        block.removeAll(keepingCapacity: true)
        start = 0
        if try block.append(capacity: BodyReader.blockSize, read) == 0 { inputEnded = true }
    }

    /// Compresses what the block holds into `output`, appending to it.
    func compress(into output: inout OutputRawSpan) throws {
        let pending = block[start...]  // a local: a span over a class's stored array must not outlive the access
        let step = try compressor.compress(pending.span, into: &output, finishing: inputEnded)
        start += step.consumed
        if step.isFinished { isFinished = true }
    }
}
