extension MultipartParser {
    /// What the parser found, in body order: for each part `partHeaders`, any number of `bodyBytes`, `partEnd`;
    /// then `end` once, at the close delimiter.
    public enum Event: Sendable, Hashable {
        /// A part begins: its headers and parsed `Content-Disposition`.
        case partHeaders(MultipartPartHead)
        /// Bytes of the current part's body: a slice of the appended input wherever possible (no copy).
        case bodyBytes(ArraySlice<UInt8>)
        /// The current part's body is complete.
        case partEnd
        /// The close delimiter: the body is complete. Anything after it (the epilogue) is skipped.
        case end
    }
}

/// The head of one part: its index, headers and parsed `Content-Disposition`.
///
/// ```swift
/// case .partHeaders(let head):
///     print(head.name, head.filename ?? "(field)", head.contentType ?? "text/plain")
/// ```
public struct MultipartPartHead: Sendable, Hashable {
    /// The fields live in one immutable box, so that an event carrying a head is one pointer wide and handing it
    /// from the parser to the caller costs one retain, not one per string. Setters replace the box, so a head is
    /// still a value.
    private final class Storage: Sendable {
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
        storage = Storage(index: index, headers: headers, disposition: disposition)
    }

    /// The part's position in the body, from 0.
    public var index: Int {
        get { storage.index }
        set { storage = Storage(index: newValue, headers: headers, disposition: disposition) }
    }
    /// The part's headers, in order.
    public var headers: MultipartHeaders {
        get { storage.headers }
        set { storage = Storage(index: index, headers: newValue, disposition: disposition) }
    }
    /// The parsed `Content-Disposition`.
    public var disposition: ContentDisposition {
        get { storage.disposition }
        set { storage = Storage(index: index, headers: headers, disposition: newValue) }
    }

    public static func == (lhs: MultipartPartHead, rhs: MultipartPartHead) -> Bool {
        lhs.storage === rhs.storage
            || (lhs.index == rhs.index && lhs.headers == rhs.headers && lhs.disposition == rhs.disposition)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(index)
        hasher.combine(headers)
        hasher.combine(disposition)
    }

    /// The field name (`Content-Disposition`'s `name`).
    public var name: String { disposition.name ?? "" }
    /// The filename as sent, or nil for a plain field.
    public var filename: String? { disposition.filename }
    /// The decoded `filename*`, when sent.
    public var filenameStar: String? { disposition.filenameStar }
    /// Whether the part is a file (it has `filename` or `filename*`).
    public var isFile: Bool { disposition.filename != nil || disposition.filenameStar != nil }
    /// The raw `Content-Type` value, trimmed, or nil when absent (RFC 7578 §4.4: `text/plain` then).
    public var contentType: String? { headers[.contentType] }
}
