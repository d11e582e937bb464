extension MultipartParser {
    /// The head of one part: its index, headers and parsed `Content-Disposition`.
    ///
    /// ```swift
    /// case .partHeaders(let head):
    ///     print(head.name, head.filename ?? "(field)", head.contentType ?? "text/plain")
    /// ```
    ///
    /// A head the parser emits is one allocation: the header block's bytes, checked in full when the part arrived
    /// (names, the disposition and its parameters), and decoded into strings when a property is read. Read a property
    /// once and keep the value where it is used often. A head is still a value: setting a property gives it storage of
    /// its own.
    public struct PartHead: Sendable, Hashable {
        /// `@unchecked`: a `ReceivedHead` is immutable once the parser hands it out.
        private enum Storage: @unchecked Sendable {
            /// Parsed by ``MultipartParser``: the header block's bytes, decoded on demand.
            case received(ReceivedHead)
            /// Made from fields, or changed after parsing.
            case made(Fields)
        }

        /// The fields of a head that was made or changed, in one immutable box, so that a head is one pointer wide.
        private final class Fields: Sendable {
            let index: Int
            let headers: MultipartHeaders
            let disposition: ContentDisposition

            init(index: Int, headers: MultipartHeaders, disposition: ContentDisposition) {
                self.index = index
                self.headers = headers
                self.disposition = disposition
            }
        }

        private var storage: Storage

        public init(index: Int, headers: MultipartHeaders, disposition: ContentDisposition) {
            storage = .made(Fields(index: index, headers: headers, disposition: disposition))
        }

        init(received: ReceivedHead) { storage = .received(received) }

        /// The part's position in the body, from 0.
        public var index: Int {
            get {
                switch storage {
                case .received(let head): head.info.index
                case .made(let fields): fields.index
                }
            }
            set { storage = .made(Fields(index: newValue, headers: headers, disposition: disposition)) }
        }

        /// The part's headers, in order. A repeated `Content-Disposition` or `Content-Type` that lenient mode resolved
        /// appears once, as the last one.
        public var headers: MultipartHeaders {
            get {
                switch storage {
                case .received(let head): head.headers
                case .made(let fields): fields.headers
                }
            }
            set { storage = .made(Fields(index: index, headers: newValue, disposition: disposition)) }
        }

        /// The parsed `Content-Disposition`.
        public var disposition: ContentDisposition {
            get {
                switch storage {
                case .received(let head): head.disposition
                case .made(let fields): fields.disposition
                }
            }
            set { storage = .made(Fields(index: index, headers: headers, disposition: newValue)) }
        }

        /// The field name (`Content-Disposition`'s `name`).
        public var name: String {
            switch storage {
            case .received(let head): head.name
            case .made(let fields): fields.disposition.name ?? ""
            }
        }

        /// Calls `body` with the bytes of ``name`` when the parser received them as they are (most names); nil for
        /// a name with escapes, or a head that was made or changed.
        func withPlainName<Result>(_ body: (Span<UInt8>) throws -> Result) rethrows -> Result? {
            guard case .received(let head) = storage else { return nil }
            return try head.withPlainName(body)
        }

        /// The filename as sent, or nil for a plain field.
        public var filename: String? {
            switch storage {
            case .received(let head): head.filename
            case .made(let fields): fields.disposition.filename
            }
        }

        /// The decoded `filename*`, when sent.
        public var filenameStar: String? {
            switch storage {
            case .received(let head): head.filenameStar
            case .made(let fields): fields.disposition.filenameStar
            }
        }

        /// The file's name by the library's one rule: `filename*` when sent, else `filename` (RFC 6266 §4.3; see
        /// ``ContentDisposition/preferredFilename``); nil for a plain field.
        public var preferredFilename: String? { filenameStar ?? filename }

        /// ``preferredFilename`` made safe to use as the last component of a path; see
        /// ``ContentDisposition/safeBaseName(_:)``.
        public var safeFilename: String? { preferredFilename.map(ContentDisposition.safeBaseName) }

        /// Whether the part is a file (it has `filename` or `filename*`).
        public var isFile: Bool {
            switch storage {
            case .received(let head): head.isFile
            case .made(let fields): fields.disposition.filename != nil || fields.disposition.filenameStar != nil
            }
        }

        /// The raw `Content-Type` value, trimmed, or nil when absent (RFC 7578 §4.4: `text/plain` then).
        public var contentType: String? {
            switch storage {
            case .received(let head): head.contentType
            case .made(let fields): fields.headers[.contentType]
            }
        }

        public static func == (lhs: PartHead, rhs: PartHead) -> Bool {
            switch (lhs.storage, rhs.storage) {
            case (.received(let left), .received(let right)) where left.isIdentical(to: right): return true
            case (.made(let left), .made(let right)) where left === right: return true
            default: return lhs.index == rhs.index && lhs.headers == rhs.headers && lhs.disposition == rhs.disposition
            }
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(index)
            hasher.combine(headers)
            hasher.combine(disposition)
        }
    }
}
