/// An error from building, reading, writing or parsing a multipart body.
///
/// A `MultipartError` says what was wrong and where: an extensible ``code`` to switch on, a ``message`` that names
/// the part, the limit or the counts involved, the byte ``offset`` in the body when there is one, and the
/// underlying ``cause`` (an I/O error, a stream's error) kept as an `Error`, never flattened into the message.
///
/// ```swift
/// do {
///     try body.append(.file(at: url, name: "photo"))
/// } catch let error as MultipartError where error.code == .fileNotFound {
///     print(error.message)   // "file not found: /tmp/photo.jpg"
/// }
/// ```
public struct MultipartError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. New codes may be added; switch with a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable name, e.g. `"lengthMismatch"`.
        public let name: String

        init(_ name: String) { self.name = name }

        public var description: String { name }

        /// A boundary that is empty, too long, or holds characters RFC 2046 §5.1.1 does not allow.
        public static let invalidBoundary = Code("invalidBoundary")
        /// The boundary occurs inside an in-memory part, so the body would not parse back.
        public static let boundaryInContent = Code("boundaryInContent")
        /// A header name that is not an RFC 9110 token, or a value holding CR, LF or NUL.
        public static let invalidHeader = Code("invalidHeader")
        /// A file part's path does not exist.
        public static let fileNotFound = Code("fileNotFound")
        /// A file part's path exists but cannot be opened or read.
        public static let fileUnreadable = Code("fileUnreadable")
        /// A file part's path is a directory or another non-regular file.
        public static let notARegularFile = Code("notARegularFile")
        /// A part produced fewer or more bytes than it declared, or a file changed size after it was appended.
        public static let lengthMismatch = Code("lengthMismatch")
        /// A part's input stream could not be created, opened or read.
        public static let streamFailed = Code("streamFailed")
        /// A one-shot input stream part was read a second time.
        public static let streamAlreadyConsumed = Code("streamAlreadyConsumed")
        /// Writing the body (to a file or a destination) failed.
        public static let writeFailed = Code("writeFailed")
        /// A `Content-Type` that is not `multipart/…` or cannot be read.
        public static let invalidContentType = Code("invalidContentType")
        /// The parser found no boundary delimiter in the whole body (a wrong boundary, or not a multipart body).
        public static let boundaryNotFound = Code("boundaryNotFound")
        /// The input ended inside a part's headers or body.
        public static let truncated = Code("truncated")
        /// The input ended after a part without the close delimiter `--boundary--`.
        public static let missingCloseDelimiter = Code("missingCloseDelimiter")
        /// Bytes after a boundary that are neither `--`, transport padding and a line break, nor allowed by the mode.
        public static let invalidDelimiter = Code("invalidDelimiter")
        /// A part without a `Content-Disposition: form-data` header (RFC 7578 §4.2).
        public static let missingContentDisposition = Code("missingContentDisposition")
        /// A part whose `Content-Disposition` has no `name` parameter (RFC 7578 §4.2).
        public static let missingName = Code("missingName")
        /// A nested key that cannot be written as part of a field name: empty, or holding a character the key
        /// strategy reads as nesting (``MultipartBody/append(parameters:keyStrategy:)``).
        public static let invalidName = Code("invalidName")
        /// A part gives a header twice that must appear once (`Content-Disposition`, `Content-Type`).
        public static let duplicateHeader = Code("duplicateHeader")
        /// A configured limit was exceeded; the message names the limit and its value.
        public static let limitExceeded = Code("limitExceeded")
        /// A limit was set to a value it cannot take (below 1); the message names it.
        public static let invalidLimit = Code("invalidLimit")
        /// A file part's path names another file than when it was appended (it was replaced, or a link was
        /// swapped in).
        public static let fileReplaced = Code("fileReplaced")
        /// The parser was used after it failed or finished, or `finish()` came before the end.
        public static let invalidState = Code("invalidState")
        /// The body reader was closed, or its task cancelled, before the end of the body.
        public static let cancelled = Code("cancelled")
        /// zlib could not start or failed while compressing (out of memory, a bad level).
        public static let compressionFailed = Code("compressionFailed")
        /// Compressed input that is not valid gzip, zlib or deflate data: a bad header, a corrupt block, a
        /// checksum that does not match, bytes after the end, or an end that never came. The offset is in the
        /// compressed input.
        public static let invalidCompressedData = Code("invalidCompressedData")
        /// A `Content-Encoding` the parser does not decode (anything but `gzip`, `x-gzip`, `deflate`, `identity`),
        /// or a list of codings.
        public static let unsupportedContentEncoding = Code("unsupportedContentEncoding")
        /// A spooled field in a charset the spooler does not decode (from the part's `Content-Type` or the form's
        /// `_charset_` field), or bytes that are not valid in it.
        public static let unsupportedCharset = Code("unsupportedCharset")
        /// The body arrived too slowly: below a ``MultipartBodyTimeout``'s minimum rate over its window, or past its
        /// deadline. The message names the rule.
        public static let timedOut = Code("timedOut")
        /// The spooler's shared ``MultipartSpooler/DiskBudget`` is spent by the uploads in progress.
        public static let insufficientStorage = Code("insufficientStorage")
        /// A budget the server shares among its uploads (a ``MultipartMemoryBudget``) had no room for this one
        /// within its wait: the server is busy, and the client may try again later (HTTP 503).
        public static let serverBusy = Code("serverBusy")
        /// The spooler's store (object storage) kept failing past its retries: it answered 5xx or `SlowDown`, timed
        /// out or dropped the connection at every try. The store is down or overloaded, not the client wrong: the
        /// client may try again later (HTTP 503, with `Retry-After` from the server products). The ``cause`` is the
        /// store's last error.
        public static let storeUnavailable = Code("storeUnavailable")
        /// A field the decoded type needs is not in the form (HTTP 422); the message names it as it would be sent.
        public static let missingField = Code("missingField")
        /// A field holds what the decoded type cannot read: text where a number, date or file is expected, a file
        /// where text is, a name sent twice for one value (HTTP 422). The message names the field.
        public static let invalidField = Code("invalidField")
        /// A ``MultipartSpooler/fileFilter`` refused a file part before any of its bytes was stored; the
        /// ``MultipartError/httpStatus`` is the one the filter chose.
        public static let fileRefused = Code("fileRefused")
        /// A body cannot be read from the offset asked for (``MultipartBody/makeReader(startingAt:)``): the offset
        /// is past the body's end or lies past the start of a stream part without a length, or the stream to skip
        /// into can be read only once. The message says which.
        public static let cannotResume = Code("cannotResume")
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence that says what was wrong: the part, the limit, the bytes or the counts involved.
    public var message: String
    /// The byte offset in the body where the failure happened, when there is one.
    public var offset: Int64?
    /// The index of the part involved, from 0, when there is one. Messages count parts from 1, as people do: the
    /// part at index 0 is "part 1".
    public var partIndex: Int?
    /// The underlying error (an `errno`, a stream's error), when there is one.
    public var cause: (any Error)?
    /// For a ``Code/limitExceeded`` error, the limit the input went past, by its name (`maxFiles`, `maxFileBytes`,
    /// `maxDecompressionRatio`): what a log line or a dashboard groups refusals by.
    public var limit: String?
    /// The status a ``MultipartSpooler/fileFilter`` chose for a ``Code/fileRefused`` error.
    var refusalStatus: Int?

    /// Creates an error.
    public init(
        code: Code, message: String, offset: Int64? = nil, partIndex: Int? = nil, cause: (any Error)? = nil,
        limit: String? = nil
    ) {
        self.code = code
        self.message = message
        self.offset = offset
        self.partIndex = partIndex
        self.cause = cause
        self.limit = limit
    }

    /// `error` with the part and the offset filled in where it has none; any other error becomes the `cause` of
    /// a ``Code/streamFailed`` error.
    init(locating error: any Error, partIndex: Int?, offset: Int64) {
        if var located = error as? MultipartError {
            located.partIndex = located.partIndex ?? partIndex
            located.offset = located.offset ?? offset
            self = located
        } else {
            self.init(
                code: .streamFailed, message: "reading the body failed", offset: offset, partIndex: partIndex,
                cause: error)
        }
    }

    public var description: String {
        var text = "MultipartError.\(code): \(message)"
        // The part is said once: in the message, or here (counted from 1, as the messages count).
        if let partIndex, !message.contains("part \(partIndex + 1)") { text += " (part \(partIndex + 1))" }
        if let offset { text += " (at byte \(offset))" }
        if let cause { text += " (cause: \(cause))" }
        return text
    }
}
