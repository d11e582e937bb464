/// A sans-I/O, incremental `multipart/form-data` parser (RFC 7578, RFC 2046 §5.1): append bytes in any chunking,
/// take events out.
///
/// The parser never reads a socket or a file and starts no task: the caller appends what arrived and drains
/// ``next()`` until it returns nil, then appends more. At the end of the input, ``finish()`` fails if the close
/// delimiter never came.
///
/// ```swift
/// var parser = try MultipartParser(contentType: request.headers["Content-Type"]!)
/// for chunk in chunks {
///     try parser.append(chunk)
///     while let event = try parser.next() {
///         switch event {
///         case .partHeaders(let head): print("part", head.name, head.filename ?? "")
///         case .bodyBytes(let bytes): sink.write(bytes)
///         case .partEnd: sink.close()
///         case .end: break
///         }
///     }
/// }
/// try parser.finish()
/// ```
///
/// Memory: body bytes come out as slices of the appended chunks. The parser holds back at most the bytes that may
/// begin a delimiter (a boundary's length and ``maxTransportPadding`` blanks) and one part's header block
/// (``Limits/maxHeaderBytesPerPart``), so it never holds more than one chunk plus those, provided the caller drains
/// ``next()`` before appending again; ``bufferedByteCount`` says how much it holds.
///
/// Speed: the boundary search is a vectorized scan (`BoundaryScanner`) over each contiguous chunk, linear in every
/// input, CR/LF-dense and boundary-prefix-dense ones included. Preamble, padding and epilogue are skipped as they
/// arrive, never rescanned.
///
/// Errors are ``MultipartError``s with the byte offset in the body and, for parts, the part index. After an error
/// every call throws it again.
///
/// The parser is an explicit state machine (its internal `State`): each state carries its own data, and its transitions
/// live in one file, `MultipartParser+<State>.swift`.
public struct MultipartParser: Sendable {
    /// The state machine, over array slices.
    var engine: Engine<ArraySlice<UInt8>>

    /// The boundary the body is split on.
    public var boundary: MultipartBoundary { engine.boundary }
    /// The limits in force.
    public var limits: Limits { engine.limits }
    /// Strict or lenient.
    public var mode: Mode { engine.mode }
    /// What the parser accepted that browsers do not usually send; see ``Quirks``.
    public var quirks: Quirks { engine.quirks }
    /// The parts begun so far.
    public var partCount: Int { engine.partCount }

    /// The most transport padding (spaces and tabs) accepted after a boundary (RFC 2046 §5.1.1 allows any amount;
    /// no client sends more than a few bytes).
    public static let maxTransportPadding = 64

    /// A parser for bodies split on `boundary`.
    ///
    /// - Throws: ``MultipartError/Code/invalidLimit`` when a limit is below 1, naming it.
    public init(boundary: MultipartBoundary, limits: Limits = .default, mode: Mode = .strict) throws {
        try limits.validate()
        engine = Engine(boundary: boundary, limits: limits, mode: mode)
    }

    /// A parser for the boundary in a `Content-Type` header value.
    ///
    /// - Throws: what ``MultipartBoundary/init(contentType:)`` throws; ``MultipartError/Code/invalidLimit``.
    public init(contentType: String, limits: Limits = .default, mode: Mode = .strict) throws {
        try self.init(boundary: try MultipartBoundary(contentType: contentType), limits: limits, mode: mode)
    }

    /// The body offset of the next byte the parser has not consumed.
    public var offset: Int64 { engine.bufferOffset }

    /// The bytes appended but not yet consumed: what the parser holds now. Bounded by the last chunk, one header
    /// block and a delimiter's length, once ``next()`` has returned nil.
    public var bufferedByteCount: Int { engine.bufferedByteCount }

    // MARK: Input

    /// Appends the next bytes of the body. The parser keeps a reference to `bytes` and hands out slices of it: it
    /// copies only the few bytes that join it to what it held (a delimiter's start, a header block), provided the
    /// caller drains ``next()`` before appending again.
    ///
    /// - Throws: ``MultipartError/Code/limitExceeded`` past ``Limits/maxBodyBytes``; the parser's earlier error;
    ///   ``MultipartError/Code/invalidState`` after ``finish()``.
    public mutating func append(_ bytes: ArraySlice<UInt8>) throws { try engine.append(bytes) }

    /// Appends the next bytes of the body; see ``append(_:)-(ArraySlice<UInt8>)``.
    public mutating func append(_ bytes: [UInt8]) throws { try append(bytes[...]) }

    /// Appends the next bytes of the body from any collection (copied).
    public mutating func append(contentsOf bytes: some Collection<UInt8>) throws { try append(Array(bytes)[...]) }

    // MARK: Output

    /// The next event, or nil when the parser needs more input (or the body is complete).
    ///
    /// - Throws: ``MultipartError`` for malformed input or a breached limit, with the byte offset and part index.
    public mutating func next() throws -> Event? {
        try engine.next()
    }

    /// Marks the end of the input.
    ///
    /// Call it after ``next()`` returned nil for the last chunk.
    ///
    /// - Throws: ``MultipartError/Code/boundaryNotFound`` when no delimiter came at all,
    ///   ``MultipartError/Code/truncated`` when the input ended inside a part,
    ///   ``MultipartError/Code/missingCloseDelimiter`` when it ended after a part without `--boundary--`; each fails
    ///   the parser. ``MultipartError/Code/invalidState`` when events are still pending (drain ``next()``, then
    ///   call again); that one does not.
    public mutating func finish() throws { try engine.finish() }
}
