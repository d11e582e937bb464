extension MultipartParser {
    /// Bounds on what a body may make the parser hold or count. Every breach is a ``MultipartError`` with the code
    /// ``MultipartError/Code/limitExceeded`` that names the limit, its value, the part and the byte offset.
    ///
    /// ```swift
    /// var limits = MultipartParser.Limits.default
    /// limits.maxFileBytes = 10 << 30     // allow 10 GiB uploads
    /// let parser = MultipartParser(boundary: boundary, limits: limits)
    /// ```
    public struct Limits: Sendable, Hashable {
        /// Bytes of one part's header block, its final empty line included. Default 16 KiB. The only input the
        /// parser holds whole, so this also bounds its memory beyond one chunk.
        public var maxHeaderBytesPerPart: Int
        /// Header lines in one part. Default 32.
        public var maxHeadersPerPart: Int
        /// Parts in one body. Default 1,000.
        public var maxParts: Int
        /// Body bytes of a part without a filename (a form field, which servers keep in memory). Default 1 MiB.
        public var maxFieldBytes: Int64
        /// Body bytes of a part with a filename. Default 8 GiB.
        public var maxFileBytes: Int64
        /// Bytes of the whole body, preamble and epilogue included. Default 16 GiB.
        public var maxBodyBytes: Int64

        public init(
            maxHeaderBytesPerPart: Int = 16 * 1024, maxHeadersPerPart: Int = 32, maxParts: Int = 1000,
            maxFieldBytes: Int64 = 1 << 20, maxFileBytes: Int64 = 8 << 30, maxBodyBytes: Int64 = 16 << 30
        ) {
            self.maxHeaderBytesPerPart = maxHeaderBytesPerPart
            self.maxHeadersPerPart = maxHeadersPerPart
            self.maxParts = maxParts
            self.maxFieldBytes = maxFieldBytes
            self.maxFileBytes = maxFileBytes
            self.maxBodyBytes = maxBodyBytes
        }

        /// The safe defaults above.
        public static let `default` = Limits()
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
    /// first boundary, a body that ends right after `--boundary--`, folded header lines); only lenient mode accepts
    /// the rest.
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
        /// Text followed `--boundary--` without a line break (lenient mode).
        public static let textAfterCloseDelimiter = Quirks(rawValue: 1 << 7)
    }
}
