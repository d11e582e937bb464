extension MultipartParser {
    /// Bounds on what a body may make the parser hold or count. Every breach is a ``MultipartError`` with the code
    /// ``MultipartError/Code/limitExceeded`` that names the limit, its value, the part and the byte offset.
    ///
    /// ```swift
    /// var limits = MultipartParser.Limits.default
    /// limits.maxFileBytes = 10 << 30     // allow 10 GiB uploads
    /// let parser = try MultipartParser(boundary: boundary, limits: limits)
    /// ```
    ///
    /// Every limit must be at least 1: the parser's initializer throws ``MultipartError/Code/invalidLimit``, naming
    /// the limit, for one that is not.
    public struct Limits: Sendable, Hashable {
        /// Bytes of one part's header block, its final empty line included. Default 16 KiB. The only input the
        /// parser holds whole, so this also bounds its memory beyond one chunk.
        public var maxHeaderBytesPerPart: Int
        /// Header lines in one part. Default 32.
        public var maxHeadersPerPart: Int
        /// Parameters in one part's `Content-Disposition` (`name`, `filename` and any others). Default 16; browsers
        /// send two. Bounds the work of checking a header for repeated parameters.
        public var maxParametersPerHeader: Int
        /// Parts in one body. Default 1,000.
        public var maxParts: Int
        /// Body bytes of a part without a filename (a form field, which servers keep in memory). Default 1 MiB.
        public var maxFieldBytes: Int64
        /// Body bytes of a part with a filename. Default 8 GiB.
        public var maxFileBytes: Int64
        /// Bytes of the whole body, preamble and epilogue included. Default 16 GiB.
        public var maxBodyBytes: Int64
        /// Bytes a compressed body (`Content-Encoding: gzip` or `deflate`) may inflate to. Default 8 GiB; the parser
        /// also counts them against ``maxBodyBytes``.
        public var maxDecompressedBytes: Int64
        /// How many times its compressed size a body may inflate to, once past its first MiB. Default 100: text
        /// forms compress 3 to 10 times, and deflate can reach about 1,000, which is what a decompression bomb
        /// uses (10 MB that inflate to 10 GB).
        public var maxDecompressionRatio: Int

        public init(
            maxHeaderBytesPerPart: Int = 16 * 1024, maxHeadersPerPart: Int = 32, maxParametersPerHeader: Int = 16,
            maxParts: Int = 1000, maxFieldBytes: Int64 = 1 << 20, maxFileBytes: Int64 = 8 << 30,
            maxBodyBytes: Int64 = 16 << 30, maxDecompressedBytes: Int64 = 8 << 30, maxDecompressionRatio: Int = 100
        ) {
            self.maxHeaderBytesPerPart = maxHeaderBytesPerPart
            self.maxHeadersPerPart = maxHeadersPerPart
            self.maxParametersPerHeader = maxParametersPerHeader
            self.maxParts = maxParts
            self.maxFieldBytes = maxFieldBytes
            self.maxFileBytes = maxFileBytes
            self.maxBodyBytes = maxBodyBytes
            self.maxDecompressedBytes = maxDecompressedBytes
            self.maxDecompressionRatio = maxDecompressionRatio
        }

        /// The safe defaults above.
        public static let `default` = Limits()

        /// Checks that every limit is at least 1.
        ///
        /// - Throws: ``MultipartError/Code/invalidLimit`` naming the first limit that is not.
        public func validate() throws {
            let values: [(String, Int64)] = [
                ("maxHeaderBytesPerPart", Int64(maxHeaderBytesPerPart)),
                ("maxHeadersPerPart", Int64(maxHeadersPerPart)),
                ("maxParametersPerHeader", Int64(maxParametersPerHeader)), ("maxParts", Int64(maxParts)),
                ("maxFieldBytes", maxFieldBytes), ("maxFileBytes", maxFileBytes), ("maxBodyBytes", maxBodyBytes),
                ("maxDecompressedBytes", maxDecompressedBytes), ("maxDecompressionRatio", Int64(maxDecompressionRatio)),
            ]
            for (name, value) in values where value < 1 {
                throw MultipartError(code: .invalidLimit, message: "\(name) must be at least 1, got \(value)")
            }
        }
    }

    /// How strictly the parser reads line endings and headers.
    public enum Mode: Sendable, Hashable {
        /// RFC 7578 and RFC 2046: CRLF line endings only, one `Content-Disposition: form-data` per part, nothing
        /// but transport padding and CRLF after the close delimiter.
        case strict
        /// What browsers, curl and old clients also send: LF-only line endings, a repeated `Content-Disposition`
        /// (the last wins), a disposition type other than `form-data`, text straight after the close delimiter.
        /// What it accepted is reported in ``MultipartParser/quirks``.
        case lenient
    }

    /// Departures from the common form that the parser met and accepted.
    ///
    /// Both modes accept and report what RFC 2046 allows but browsers never send (a preamble, a CRLF before the
    /// first boundary, a body that ends right after `--boundary--`, folded header lines) and an empty part whose
    /// delimiter follows its headers directly; only lenient mode accepts the rest.
    public struct Quirks: OptionSet, Sendable, Hashable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }

        /// A line ending was a bare LF (lenient mode).
        public static let lineFeedLineEndings = Quirks(rawValue: 1 << 0)
        /// The body ended right after `--boundary--`, with no CRLF.
        public static let missingFinalLineBreak = Quirks(rawValue: 1 << 1)
        /// The body began with a line break before the first boundary.
        public static let leadingLineBreak = Quirks(rawValue: 1 << 2)
        /// The body had a preamble other than one line break before the first boundary.
        public static let preamble = Quirks(rawValue: 1 << 3)
        /// A header line was folded onto the next line (obsolete, RFC 5322 §3.2.2).
        public static let headerFolding = Quirks(rawValue: 1 << 4)
        /// A part repeated `Content-Disposition` or `Content-Type`; the last one was used (lenient mode).
        public static let duplicateHeaders = Quirks(rawValue: 1 << 5)
        /// A disposition type other than `form-data` (lenient mode).
        public static let otherDispositionType = Quirks(rawValue: 1 << 6)
        /// Text, or more than ``MultipartParser/maxTransportPadding`` blanks, followed `--boundary--` on its line
        /// (lenient mode).
        public static let textAfterCloseDelimiter = Quirks(rawValue: 1 << 7)
        /// A part's header block was followed directly by the next delimiter, its empty line doubling as the
        /// delimiter's line break: an empty part (both modes; Go and Werkzeug read it the same way).
        public static let delimiterAfterHeaders = Quirks(rawValue: 1 << 8)
    }
}
