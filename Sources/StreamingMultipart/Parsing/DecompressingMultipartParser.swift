/// A ``MultipartParser`` behind a zlib stage: append the compressed body as it arrives, take the same events out.
///
/// ```swift
/// var parser = try DecompressingMultipartParser(
///     contentType: request.headers["Content-Type"]!, contentEncoding: request.headers["Content-Encoding"])
/// for chunk in chunks {
///     try parser.append(chunk)
///     while let event = try parser.next() { handle(event) }
/// }
/// try parser.finish()
/// ```
///
/// The compressed input is inflated 64 KiB at a time, only when the parser needs more bytes, so memory stays at
/// one block however far the data inflates and whatever the caller does with the events. Two limits stop
/// decompression bombs: ``MultipartParser/Limits/maxDecompressedBytes`` and
/// ``MultipartParser/Limits/maxDecompressionRatio``. Errors in the compressed data carry the offset in the
/// compressed input; errors in the multipart body, the offset in the decompressed body.
///
/// It owns a zlib stream, so it is `~Copyable`.
public struct DecompressingMultipartParser: ~Copyable {
    /// The parser the decompressed bytes go to.
    public private(set) var parser: MultipartParser
    /// The coding being undone.
    public let encoding: ContentEncoding
    private var decompressor: ZlibDecompressor
    /// For `deflate`: whether the first bytes have said zlib or raw yet.
    private var knowsFormat: Bool
    private var pending: ArraySlice<UInt8> = []
    private var inputEnded = false
    private var failure: MultipartError?

    /// The output block inflated at a time.
    static let blockSize = 64 * 1024
    /// The decompressed bytes before ``MultipartParser/Limits/maxDecompressionRatio`` applies, so that a small,
    /// very compressible body is not refused.
    static let ratioGraceBytes: Int64 = 1 << 20

    /// A parser for the body of a request with these `Content-Type` and `Content-Encoding` values.
    ///
    /// - Throws: what ``MultipartParser/init(contentType:limits:mode:)`` throws;
    ///   ``MultipartError/Code/unsupportedContentEncoding`` for a coding other than gzip, deflate or identity.
    public init(
        contentType: String, contentEncoding: String?, limits: MultipartParser.Limits = .default,
        mode: MultipartParser.Mode = .strict
    ) throws {
        self.init(
            parser: try MultipartParser(contentType: contentType, limits: limits, mode: mode),
            encoding: try ContentEncoding(headerValue: contentEncoding))
    }

    /// `parser` behind the stage that undoes `encoding`.
    public init(parser: MultipartParser, encoding: ContentEncoding) {
        self.parser = parser
        self.encoding = encoding
        decompressor = ZlibDecompressor(format: encoding == .gzip ? .gzip : .zlib)
        knowsFormat = encoding != .deflate
    }

    /// Appends the next bytes of the compressed body. They are inflated as ``next()`` needs them.
    public mutating func append(_ bytes: ArraySlice<UInt8>) throws {
        if failure != nil { throw failure! }
        guard encoding != .identity else { return try parser.append(bytes) }
        if pending.isEmpty { pending = bytes } else { pending.append(contentsOf: bytes) }
    }

    /// The next event, or nil when more compressed input is needed (or the body is complete).
    public mutating func next() throws -> MultipartParser.Event? {
        // Compared with nil rather than bound: binding copies the error out and destroys the copy at every event.
        if failure != nil { throw failure! }
        do {
            while true {
                if let event = try parser.next() { return event }
                guard encoding != .identity, try inflateBlock() else { return nil }
            }
        } catch let error as MultipartError {
            failure = error
            throw error
        }
    }

    /// Marks the end of the input: the compressed stream must have ended, then the parser checks the body.
    public mutating func finish() throws {
        if let failure { throw failure }
        inputEnded = true
        do {
            if encoding != .identity {
                // After next() has returned nil nothing is left to inflate. Input that is gave the parser bytes
                // whose events next() must hand out first: none is taken here, so none is lost.
                if try inflateBlock() {
                    throw MultipartError(
                        code: .invalidState,
                        message: "finish() came while input was still to be read: drain next() until it returns nil, "
                            + "then call finish() again",
                        offset: decompressor.totalIn)
                }
                try decompressor.finish()
            }
            try parser.finish()
        } catch let error as MultipartError {
            if error.code != .invalidState { failure = error }
            throw error
        }
    }

    /// Inflates up to one block of pending input into the parser; returns whether it gave the parser any bytes.
    private mutating func inflateBlock() throws -> Bool {
        if !knowsFormat {
            guard pending.count >= 2 || (inputEnded && !pending.isEmpty) else { return false }
            decompressor.reset(format: ContentEncoding.beginsWithZlibHeader(pending) ? .zlib : .rawDeflate)
            knowsFormat = true
        }
        guard !pending.isEmpty || decompressor.hasPendingOutput else { return false }
        var block: [UInt8] = []
        let input = pending
        let step = try block.append(capacity: Self.blockSize) { try decompressor.decompress(input.span, into: &$0) }
        pending = pending.count == step.consumed ? [] : pending.dropFirst(step.consumed)
        try checkLimits()
        guard step.produced > 0 else { return false }
        try parser.append(block[...])
        return true
    }

    private func checkLimits() throws {
        let inflated = decompressor.totalOut
        let limits = parser.limits
        if inflated > limits.maxDecompressedBytes {
            throw MultipartError(
                code: .limitExceeded,
                message: "the body inflates to more than maxDecompressedBytes (\(limits.maxDecompressedBytes) bytes)",
                offset: decompressor.totalIn, limit: "maxDecompressedBytes")
        }
        let compressed = decompressor.totalIn
        if inflated > Self.ratioGraceBytes, inflated > compressed * Int64(limits.maxDecompressionRatio) {
            throw MultipartError(
                code: .limitExceeded,
                message: "the body inflates to more than maxDecompressionRatio (\(limits.maxDecompressionRatio)) times "
                    + "its compressed size: \(inflated) bytes from \(compressed)",
                offset: compressed, limit: "maxDecompressionRatio")
        }
    }
}
