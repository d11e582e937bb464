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
/// begin a delimiter (a boundary's length and a little padding) and one part's header block
/// (``Limits/maxHeaderBytesPerPart``), so it never holds more than one chunk plus those, provided the caller drains
/// ``next()`` before appending again.
///
/// Speed: the boundary search is a vectorized scan (``BoundaryScanner``) over each contiguous chunk, linear in every
/// input, CR/LF-dense and boundary-prefix-dense ones included. Preamble and epilogue are skipped a chunk at a time.
///
/// Errors are ``MultipartError``s with the byte offset in the body and, for parts, the part index. After an error
/// every call throws it again.
public struct MultipartParser: Sendable {
    /// The boundary the body is split on.
    public let boundary: MultipartBoundary
    /// The limits in force.
    public let limits: Limits
    /// Strict or lenient.
    public let mode: Mode
    /// What the parser accepted that browsers do not usually send; see ``Quirks``.
    public internal(set) var quirks: Quirks = []
    /// The parts begun so far.
    public internal(set) var partCount = 0

    /// Unread input. Its first byte is at body offset `bufferOffset`.
    var buffer: ArraySlice<UInt8> = []
    var bufferOffset: Int64 = 0
    var state: State = .preamble
    var inputEnded = false
    /// Whether the close delimiter has been found.
    var closed = false
    /// The current part: its body bytes so far, and whether it is a file (for the field or file limit).
    var partBytes: Int64 = 0
    var partIsFile = false
    /// The header fields of the part whose header block is arriving, parsed line by line.
    var pendingFields: [MultipartHeaders.Field] = []
    /// `--boundary`, and the scanner for the delimiter that precedes it inside the body.
    let dashBoundary: [UInt8]
    let scanner: BoundaryScanner

    /// The parser's states. Each says what it reads and where it goes next.
    enum State: Sendable {
        /// Skipping bytes before the first `--boundary`. Next: `.headers` (a part) or `.closed` (an empty body).
        case preamble
        /// Collecting a part's header block; its first `scanned` bytes are whole lines, none of them empty, already
        /// parsed into `pendingFields`. Next: `.body`, emitting `.partHeaders`.
        case headers(scanned: Int)
        /// Emitting a part's body. Next: `.delimiter` once the delimiter that ends it is at the buffer's start.
        case body
        /// The buffer begins with a delimiter of `length` bytes that ends the part and either starts the next
        /// (`closes == false`) or closes the body. Emits `.partEnd`. Next: `.nextPart` or `.closed`.
        case delimiter(length: Int, closes: Bool)
        /// Between a part's end and the next part's headers: checks ``Limits/maxParts``. Next: `.headers`.
        case nextPart
        /// The close delimiter was consumed. Emits `.end`. Next: `.afterClose`.
        case closed
        /// Reading the transport padding and line break after `--boundary--`. Next: `.epilogue`.
        case afterClose
        /// Skipping the epilogue; nothing more is emitted.
        case epilogue
        /// A failure; every later call throws it.
        case failed(MultipartError)
    }

    /// A parser for bodies split on `boundary`.
    public init(boundary: MultipartBoundary, limits: Limits = .default, mode: Mode = .strict) {
        self.boundary = boundary
        self.limits = limits
        self.mode = mode
        dashBoundary = Array("--\(boundary.value)".utf8)
        scanner = BoundaryScanner(pattern: (mode == .strict ? [0x0D, 0x0A] : [0x0A]) + dashBoundary)
    }

    /// A parser for the boundary in a `Content-Type` header value.
    ///
    /// - Throws: what ``MultipartBoundary/init(contentType:)`` throws.
    public init(contentType: String, limits: Limits = .default, mode: Mode = .strict) throws {
        self.init(boundary: try MultipartBoundary(contentType: contentType), limits: limits, mode: mode)
    }

    /// The body offset of the next byte the parser has not consumed.
    public var offset: Int64 { bufferOffset }

    // MARK: Input

    /// Appends the next bytes of the body. The parser keeps a reference to `bytes` (no copy) while it holds no
    /// earlier bytes.
    ///
    /// - Throws: ``MultipartError/Code/limitExceeded`` past ``Limits/maxBodyBytes``; the parser's earlier error;
    ///   ``MultipartError/Code/invalidState`` after ``finish()``.
    public mutating func append(_ bytes: ArraySlice<UInt8>) throws {
        if case .failed(let error) = state { throw error }
        guard !inputEnded else {
            throw MultipartError(code: .invalidState, message: "append(_:) after finish()", offset: bufferOffset)
        }
        let end = bufferOffset + Int64(buffer.count) + Int64(bytes.count)
        guard end <= limits.maxBodyBytes else {
            throw fail(
                MultipartError(
                    code: .limitExceeded,
                    message: "the body is larger than maxBodyBytes (\(limits.maxBodyBytes) bytes)",
                    offset: limits.maxBodyBytes, partIndex: currentPartIndex))
        }
        if case .epilogue = state {
            bufferOffset = end  // skipped as it arrives
        } else if buffer.isEmpty {
            buffer = bytes
        } else {
            buffer.append(contentsOf: bytes)  // in place, amortized, unless an emitted slice shares the storage
        }
    }

    /// Appends the next bytes of the body; see ``append(_:)-(ArraySlice<UInt8>)``.
    public mutating func append(_ bytes: [UInt8]) throws { try append(bytes[...]) }

    /// Appends the next bytes of the body from any collection (copied).
    public mutating func append(contentsOf bytes: some Collection<UInt8>) throws { try append(Array(bytes)[...]) }

    /// Marks the end of the input.
    ///
    /// Call it after ``next()`` returned nil for the last chunk. Events already found stay available.
    ///
    /// - Throws: ``MultipartError/Code/boundaryNotFound`` when no delimiter came at all,
    ///   ``MultipartError/Code/truncated`` when the input ended inside a part,
    ///   ``MultipartError/Code/missingCloseDelimiter`` when it ended after a part without `--boundary--`.
    public mutating func finish() throws {
        if case .failed(let error) = state { throw error }
        inputEnded = true
        if closed {
            if case .afterClose = state, buffer.isEmpty { quirks.insert(.missingFinalLineBreak) }
            return
        }
        switch state {
        case .preamble:
            throw fail(
                MultipartError(
                    code: .boundaryNotFound,
                    message: "the body never contains the boundary \(String(reflecting: boundary.value))",
                    offset: bufferOffset + Int64(buffer.count)))
        case .headers where buffer.isEmpty, .delimiter(_, closes: false), .nextPart:
            throw fail(
                MultipartError(
                    code: .missingCloseDelimiter,
                    message: "the body ended after part \(partCount - 1) without the close delimiter "
                        + "--\(boundary.value)--",
                    offset: bufferOffset + Int64(buffer.count)))
        case .headers:
            throw fail(
                MultipartError(
                    code: .truncated, message: "the body ended inside the headers of part \(partCount - 1)",
                    offset: bufferOffset + Int64(buffer.count), partIndex: currentPartIndex))
        default:
            throw fail(
                MultipartError(
                    code: .truncated,
                    message: "the body ended inside part \(partCount - 1) (\(partBytes) body bytes read) "
                        + "before its closing boundary",
                    offset: bufferOffset + Int64(buffer.count), partIndex: currentPartIndex))
        }
    }

    // MARK: Output

    /// The next event, or nil when the parser needs more input (or the body is complete).
    ///
    /// - Throws: ``MultipartError`` for malformed input or a breached limit, with the byte offset and part index.
    public mutating func next() throws -> Event? {
        do {
            return try step()
        } catch let error as MultipartError {
            throw fail(error)
        }
    }

    private mutating func step() throws -> Event? {
        while true {
            switch state {
            case .failed(let error):
                throw error
            case .preamble:
                guard try skipPreamble() else { return nil }
            case .headers(let scanned):
                guard let head = try readHeaders(scannedTo: scanned) else { return nil }
                return .partHeaders(head)
            case .body:
                switch try readBody() {
                case .bytes(let bytes): return .bodyBytes(bytes)
                case .delimiterAhead: continue
                case .needInput: return nil
                }
            case .delimiter(let length, let closes):
                consume(length)
                state = closes ? .closed : .nextPart
                return .partEnd
            case .nextPart:
                try beginPart()
            case .closed:
                state = .afterClose
                return .end
            case .afterClose:
                guard try readAfterClose() else { return nil }
            case .epilogue:
                consume(buffer.count)
                return nil
            }
        }
    }

    // MARK: Helpers shared by the states

    var currentPartIndex: Int? { partCount > 0 && !closed ? partCount - 1 : nil }

    /// Drops `count` bytes from the front of the buffer.
    mutating func consume(_ count: Int) {
        bufferOffset += Int64(count)
        if count == buffer.count {
            buffer = []  // release the chunk
        } else {
            buffer.removeFirst(count)  // in place: O(1) for a slice, and no retain or release
        }
    }

    /// The body offset of buffer index `index`.
    func bodyOffset(_ index: Int) -> Int64 { bufferOffset + Int64(index - buffer.startIndex) }

    /// Records `error` as the parser's state and returns it to throw.
    mutating func fail(_ error: MultipartError) -> MultipartError {
        var error = error
        if error.offset == nil { error.offset = bufferOffset }
        state = .failed(error)
        return error
    }

    /// Starts a new part after a delimiter line.
    mutating func beginPart() throws {
        guard partCount < limits.maxParts else {
            throw MultipartError(
                code: .limitExceeded, message: "the body has more than maxParts (\(limits.maxParts)) parts",
                offset: bufferOffset, partIndex: partCount)
        }
        partCount += 1
        partBytes = 0
        partIsFile = false
        pendingFields = []
        state = .headers(scanned: 0)
    }
}
