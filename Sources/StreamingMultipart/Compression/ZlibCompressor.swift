import CZlib

/// Compresses a stream of bytes into gzip, zlib or raw deflate, chunk in, chunk out, into buffers you give it.
///
/// It owns one zlib stream and frees it when it goes away, on every path. It is `~Copyable` rather than a class:
/// a copy would share the stream (and free it twice), and a value with a `deinit` costs no reference counting.
///
/// ```swift
/// var compressor = try ZlibCompressor(format: .gzip, level: 6)
/// var compressed: [UInt8] = []
/// var consumed = 0                               // the whole input here; any chunking works
/// while true {
///     let rest = bytes[consumed...]
///     let step = try compressed.append(capacity: 64 * 1024) {
///         try compressor.compress(rest.span, into: &$0, finishing: true)
///     }
///     consumed += step.consumed
///     if step.isFinished { break }
/// }
/// ```
struct ZlibCompressor: ~Copyable {
    /// What one call did.
    struct Step: Sendable, Hashable {
        /// Input bytes zlib took.
        var consumed: Int
        /// Output bytes it wrote.
        var produced: Int
        /// Whether the compressed stream is complete (only after `finishing: true`, once zlib flushed everything).
        var isFinished: Bool
    }

    private let stream: ZlibStream
    /// The format written.
    let format: CompressionFormat
    /// Input bytes compressed so far.
    private(set) var totalIn: Int64 = 0
    /// Compressed bytes written so far.
    private(set) var totalOut: Int64 = 0

    /// A compressor for `format` at `level`: 1 is fastest, 9 smallest, 6 zlib's default.
    ///
    /// - Throws: ``MultipartError/Code/compressionFailed`` for a level outside 0…9, or when zlib cannot start.
    init(format: CompressionFormat, level: Int = 6) throws {
        guard (0...9).contains(level) else {
            throw MultipartError(code: .compressionFailed, message: "compression level \(level) is not within 0…9")
        }
        stream = try ZlibStream(.compress, format: format, level: Int32(level))
        self.format = format
    }

    deinit { stream.free() }

    /// Compresses from `input` into the free capacity of `output` as far as both allow, appending to `output`.
    ///
    /// Call again with the input it did not consume, and with fresh output room, until it has consumed everything;
    /// then call with `finishing: true` (and the rest of the input, if any) until ``Step/isFinished``.
    ///
    /// - Throws: ``MultipartError/Code/compressionFailed`` if zlib reports an error (it does not for valid use).
    mutating func compress(_ input: Span<UInt8>, into output: inout OutputRawSpan, finishing: Bool = false) throws
        -> Step
    {
        let flush = finishing ? Z_FINISH : Z_NO_FLUSH
        let (status, consumed, produced) = stream.run(input, into: &output) { deflate($0, flush) }
        totalIn += Int64(consumed)
        totalOut += Int64(produced)
        switch status {
        case Z_STREAM_END:
            return Step(consumed: consumed, produced: produced, isFinished: true)
        case Z_OK, Z_BUF_ERROR:  // Z_BUF_ERROR: no progress possible with this room; more output room will do
            return Step(consumed: consumed, produced: produced, isFinished: false)
        default:
            throw MultipartError(
                code: .compressionFailed,
                message: "compressing failed after \(totalIn) input bytes: \(stream.describe(status))")
        }
    }
}
