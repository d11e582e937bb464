extension MultipartSpooler {
    /// Bounds on what one form may make the spooler hold in memory or write to disk, on top of the parser's own
    /// (``MultipartParser/Limits``: bytes per field and per file, parts, headers, the whole body, decompression).
    /// Every breach ends the upload with a ``MultipartError`` whose code is ``MultipartError/Code/limitExceeded`` and
    /// whose message names the limit, and removes every file the form spooled.
    ///
    /// ```swift
    /// var limits = MultipartSpooler.Limits.default
    /// limits.maxFiles = 4
    /// limits.parser.maxFileBytes = 100 << 20      // 100 MiB a file
    /// limits.maxDiskBytes = 200 << 20             // 200 MiB for the whole form
    /// ```
    public struct Limits: Sendable, Hashable {
        /// The parser's limits. Its ``MultipartParser/Limits/maxFieldBytes`` (1 MiB by default) bounds one field,
        /// its ``MultipartParser/Limits/maxFileBytes`` one file, and its ``MultipartParser/Limits/maxParts`` the
        /// parts of a form.
        public var parser: MultipartParser.Limits
        /// File parts in one form, kept in memory or on disk. Default 100.
        public var maxFiles: Int
        /// Bytes the form keeps in memory: its fields together, and the files kept in memory under
        /// ``memoryThreshold``, each part counting its name and 128 bytes for its record beside its bytes (so that a
        /// flood of empty fields is bounded too). Default 8 MiB. A field that would pass it is an error; a file that
        /// would pass it goes to disk instead. Go's `ReadForm(maxMemory)` bounds the same. It counts bytes as sent:
        /// each field is also held as text (``SpooledForm/Field/value``), at most three times its bytes in a charset
        /// other than UTF-8, so the fields hold at most four times this, with the records.
        public var maxMemoryBytes: Int64
        /// Bytes of all the form's files on disk together. Default 16 GiB.
        public var maxDiskBytes: Int64
        /// A file part of at most this many bytes is kept in memory rather than written to disk. Default 0: every
        /// file goes to disk.
        public var memoryThreshold: Int
        /// How slowly the body may arrive; see ``MultipartBodyTimeout``. Default ``MultipartBodyTimeout/default``:
        /// 500 bytes a second over 20-second windows. Nil turns it off (a body from a local file, say).
        public var bodyTimeout: MultipartBodyTimeout?

        public init(
            parser: MultipartParser.Limits = .default, maxFiles: Int = 100, maxMemoryBytes: Int64 = 8 << 20,
            maxDiskBytes: Int64 = 16 << 30, memoryThreshold: Int = 0, bodyTimeout: MultipartBodyTimeout? = .default
        ) {
            self.parser = parser
            self.maxFiles = maxFiles
            self.maxMemoryBytes = maxMemoryBytes
            self.maxDiskBytes = maxDiskBytes
            self.memoryThreshold = memoryThreshold
            self.bodyTimeout = bodyTimeout
        }

        /// The defaults above.
        public static let `default` = Limits()

        /// Checks that every limit is at least 1 (``memoryThreshold`` at least 0), the parser's and the body
        /// timeout's too.
        ///
        /// - Throws: ``MultipartError/Code/invalidLimit`` naming the first limit that is not.
        public func validate() throws {
            try parser.validate()
            let values: [(String, Int64)] = [
                ("maxFiles", Int64(maxFiles)), ("maxMemoryBytes", maxMemoryBytes),
                ("maxDiskBytes", maxDiskBytes),
            ]
            for (name, value) in values where value < 1 {
                throw MultipartError(code: .invalidLimit, message: "\(name) must be at least 1, got \(value)")
            }
            guard memoryThreshold >= 0 else {
                throw MultipartError(
                    code: .invalidLimit, message: "memoryThreshold must be at least 0, got \(memoryThreshold)")
            }
            try bodyTimeout?.validate()
        }
    }
}
