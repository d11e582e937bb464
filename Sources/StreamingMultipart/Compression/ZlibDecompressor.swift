import CZlib

/// Decompresses gzip, zlib or raw deflate input, chunk in, chunk out, into buffers you give it, so that memory stays
/// at the buffers' size however far the data inflates.
///
/// gzip input may hold several members one after another (RFC 1952 §2.2), and all are read. After the end, any
/// byte that does not begin another member is an error, as are corrupt data, a checksum that does not match, and
/// input that ends before the stream does (``finish()``). Errors name the offset in the compressed input.
///
/// `~Copyable` for the reason ``ZlibCompressor`` is: it owns a zlib stream and frees it in its `deinit`.
///
/// ```swift
/// var decompressor = ZlibDecompressor(format: .gzip)
/// var consumed = 0
/// while consumed < chunk.count || decompressor.hasPendingOutput {
///     var output: [UInt8] = []
///     let rest = chunk[consumed...]
///     let step = try output.append(capacity: 64 * 1024) { try decompressor.decompress(rest.span, into: &$0) }
///     use(output)
///     consumed += step.consumed
/// }
/// try decompressor.finish()  // at the end of the input
/// ```
struct ZlibDecompressor: ~Copyable {
    /// What one call did.
    struct Step: Sendable, Hashable {
        /// Compressed bytes zlib took.
        var consumed: Int
        /// Decompressed bytes it wrote.
        var produced: Int
    }

    /// Started at the first ``decompress(_:into:)``, so that making a decompressor cannot fail.
    private var stream: ZlibStream?
    /// The format read.
    private(set) var format: CompressionFormat
    /// Compressed bytes read so far.
    private(set) var totalIn: Int64 = 0
    /// Decompressed bytes written so far.
    private(set) var totalOut: Int64 = 0
    /// Whether the last stream (or gzip member) ended and no more input has come since.
    private(set) var isAtEnd = false
    /// Whether the last call filled its output: zlib may hold more for the next call even without new input.
    private(set) var hasPendingOutput = false

    /// A decompressor for `format`. zlib starts at the first ``decompress(_:into:)``.
    init(format: CompressionFormat) {
        self.format = format
    }

    deinit { stream?.free() }

    /// Starts over, reading `format`, before any input was given (`deflate` decides zlib or raw from its first
    /// bytes).
    mutating func reset(format: CompressionFormat) {
        stream?.reset(format: format)
        self.format = format
    }

    /// Decompresses from `input` into the free capacity of `output` as far as both allow, appending to `output`.
    ///
    /// - Throws: ``MultipartError/Code/invalidCompressedData`` for input that is not valid data of the format, or
    ///   that follows the end of a zlib or raw deflate stream; ``MultipartError/Code/compressionFailed`` when zlib
    ///   cannot start.
    mutating func decompress(_ input: Span<UInt8>, into output: inout OutputRawSpan) throws -> Step {
        if stream == nil { stream = try ZlibStream(.decompress, format: format) }
        let stream = stream!
        var consumed = 0
        var produced = 0
        while true {
            let remaining = input.extracting(consumed...)
            if isAtEnd {
                guard !remaining.isEmpty else { break }
                // After the end: another gzip member may follow; nothing may follow the other formats.
                guard format == .gzip, remaining[0] == 0x1F else { throw trailingData() }
                stream.reset()
                isAtEnd = false
            }
            if remaining.isEmpty && !hasPendingOutput || output.isFull { break }
            let (status, took, gave) = stream.run(remaining, into: &output) { inflate($0, Z_NO_FLUSH) }
            consumed += took
            produced += gave
            totalIn += Int64(took)
            totalOut += Int64(gave)
            hasPendingOutput = output.isFull
            switch status {
            case Z_STREAM_END:
                isAtEnd = true
                hasPendingOutput = false
            case Z_OK:
                continue
            case Z_BUF_ERROR:  // no progress: all input used, or no room left
                hasPendingOutput = false
                return Step(consumed: consumed, produced: produced)
            default:
                throw MultipartError(
                    code: .invalidCompressedData,
                    message: "the \(format) data is invalid: \(stream.describe(status))", offset: totalIn)
            }
        }
        return Step(consumed: consumed, produced: produced)
    }

    /// Marks the end of the input.
    ///
    /// - Throws: ``MultipartError/Code/invalidCompressedData`` when the stream did not end (the input was cut).
    func finish() throws {
        guard isAtEnd else {
            throw MultipartError(
                code: .invalidCompressedData,
                message: totalIn == 0
                    ? "the \(format) data is empty" : "the \(format) data ends before its end (truncated)",
                offset: totalIn)
        }
    }

    private func trailingData() -> MultipartError {
        MultipartError(
            code: .invalidCompressedData,
            message: format == .gzip
                ? "bytes after the end of the gzip data that do not begin another member"
                : "bytes after the end of the \(format) data", offset: totalIn)
    }
}
