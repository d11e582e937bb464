extension MultipartParser {
    /// The parser's state machine, generic over the storage it reads (``ParserInput``): array slices for
    /// ``MultipartParser``, ``LentBytes`` for chunks that lend their storage (a `ByteBuffer`'s), so that body bytes
    /// come out as slices of whatever came in. Specialized for both inside this module: neither pays for the other.
    ///
    /// Its states and transitions are those ``MultipartParser`` documents, one file each
    /// (`MultipartParser+<State>.swift`).
    package struct Engine<Input: ParserInput>: Sendable {
        package typealias Limits = MultipartParser.Limits
        package typealias Mode = MultipartParser.Mode
        package typealias Quirks = MultipartParser.Quirks
        package typealias Event = Input.Event

        let boundary: MultipartBoundary
        let limits: Limits
        let mode: Mode
        /// What the parser accepted that browsers do not usually send; see ``Quirks``.
        package var quirks: Quirks = []
        /// The parts begun so far.
        var partCount = 0
        /// The outer field's name, for a parser of the files inside a `multipart/mixed` part; see
        /// ``init(mixedIn:limits:mode:)``.
        var mixedFieldName: String?
        /// Whether a bare LF begins a delimiter line inside this body: in lenient mode, when its first delimiter line
        /// ended in one (Go's `mime/multipart` reads a body the same way). Set once, as the preamble ends.
        var lineFeedDelimiters = false

        /// Unread input. Its first byte is at body offset `bufferOffset`.
        var buffer = Input()
        /// Unread input after `buffer`: the rest of a chunk appended while the buffer held bytes (see `PendingChunk`).
        var pending: PendingChunk?
        var bufferOffset: Int64 = 0
        var state: State = .preamble(skippedBoundary: nil)
        /// The search for `--boundary` (which it holds as `dashBoundary`), after a line break or anywhere.
        let scanner: BoundaryScanner
        /// The fields of the header block being read (in `.headers`), as each line was checked, so that the head is
        /// made without reading the lines again. Kept from part to part so that its storage is reused; at most
        /// ``Limits/maxHeadersPerPart`` entries.
        var headerFields: [ReceivedHead.Field] = []

        /// The parser's states. Each carries what it needs and says where it goes next.
        enum State: Sendable {
            /// Skipping bytes before the first `--boundary` (`+Preamble`); `skippedBoundary` is the body offset of the
            /// first `--boundary` skipped as no delimiter (lenient mode), for the error if no delimiter follows.
            /// Next: `.partStart` after a delimiter line, `.end` after a close delimiter (an empty form).
            case preamble(skippedBoundary: Int64?)
            /// A delimiter line was consumed: a part begins unless ``Limits/maxParts`` is reached (`+Headers`).
            /// Next: `.headers`.
            case partStart
            /// Collecting a part's header block (`+Headers`). Next: `.body`, emitting `.partHeaders`.
            case headers(HeaderBlock)
            /// Emitting a part's body (`+Body`). Next: `.delimiter` once the delimiter that ends it is at the
            /// buffer's start.
            case body(PartBody)
            /// The buffer begins with the delimiter that ends the part (`+Body`). Emits `.partEnd`.
            /// Next: `.partStart`, or `.end` for the close delimiter.
            case delimiter(Delimiter)
            /// The close delimiter was consumed (`+Close`); `emptyForm` when it was the body's first delimiter.
            /// Emits `.end`. Next: `.afterClose`.
            case end(emptyForm: Bool)
            /// Reading the transport padding and line break after `--boundary--`, `padding` blanks so far (`+Close`).
            /// Next: `.epilogue`.
            case afterClose(padding: Int, emptyForm: Bool)
            /// Skipping the epilogue as it arrives; nothing more is emitted (`+Close`). Next: `.finished` at
            /// ``finish()``.
            case epilogue
            /// ``finish()`` accepted the body: every call returns nil, and `append(_:)` throws.
            case finished
            /// A failure; every later call throws it.
            case failed(Failure)
            /// Holds nothing. Only seen inside a transition, while a state's data is mutated in place (moved out of
            /// the enum so that its buffers are uniquely referenced and grow without a copy).
            case transitioning
        }

        /// The error a failed parser throws again, boxed: an error holds an existential (its cause), and inline it
        /// would make every state, and so the parser, a type that is copied through memory, on every helper call.
        final class Failure: Sendable {
            let error: MultipartError

            init(_ error: MultipartError) { self.error = error }
        }

        /// A part's header block as it arrives.
        struct HeaderBlock: Sendable {
            /// Bytes at the buffer's start that are whole header lines, none of them empty, already parsed into
            /// `fields`, so that input arriving a byte at a time is scanned once, not once per byte.
            var scanned = 0
            /// How many fields in those lines are `Content-Disposition` and `Content-Type` (the fields themselves are
            /// the parser's `headerFields`). The lines are read into the part's head when the block is complete.
            var dispositions = 0
            var contentTypes = 0
            /// Quirks met in these lines; recorded when the block is complete, so that a limit error inside the
            /// block reports the same quirks for every chunking.
            var quirks: Quirks = []
        }

        /// A part whose body is being emitted.
        struct PartBody: Sendable {
            /// Body bytes emitted so far.
            var bytes: Int64 = 0
            /// ``Limits/maxFileBytes`` or ``Limits/maxFieldBytes``.
            let limit: Int64
            let isFile: Bool
        }

        /// A delimiter found at the buffer's start.
        struct Delimiter: Sendable {
            /// Its bytes, from its line break through the line break after `--boundary` (or through `--boundary--`).
            let length: Int
            /// Whether it is the close delimiter.
            let closes: Bool
            /// Quirks it shows; recorded when it is consumed, not when it is first seen.
            let quirks: Quirks
        }

        package init(boundary: MultipartBoundary, limits: Limits, mode: Mode) {
            self.boundary = boundary
            self.limits = limits
            self.mode = mode
            scanner = BoundaryScanner(dashBoundary: boundary.dashBoundary)
        }

        package var bufferedByteCount: Int { buffer.count + (pending.map { $0.chunk.endIndex - $0.next } ?? 0) }

        /// Appends the next bytes of the body; see ``MultipartParser/append(_:)-(ArraySlice<UInt8>)``.
        package mutating func append(_ bytes: Input) throws {
            switch state {
            case .failed(let failure): throw failure.error
            case .finished:
                throw MultipartError(code: .invalidState, message: "append(_:) after finish()", offset: bufferOffset)
            default: break
            }
            let end = inputEnd + Int64(bytes.count)
            guard end <= limits.maxBodyBytes else {
                throw fail(
                    MultipartError(
                        code: .limitExceeded,
                        message: "the body is larger than maxBodyBytes (\(limits.maxBodyBytes) bytes)",
                        offset: limits.maxBodyBytes, partIndex: currentPartIndex, limit: "maxBodyBytes"))
            }
            if case .epilogue = state {
                bufferOffset = end  // skipped as it arrives
            } else if pending != nil {  // appended before next() returned nil: joined, copied
                joinPending()
                buffer.append(contentsOf: bytes)
            } else if buffer.isEmpty {
                buffer = bytes
            } else {
                pending = PendingChunk(chunk: bytes, next: bytes.startIndex)  // taken in as the state needs it
            }
        }

        /// The next event, or nil when the parser needs more input (or the body is complete).
        ///
        /// - Throws: ``MultipartError`` for malformed input or a breached limit, with the byte offset and part index.
        @inline(__always)
        package mutating func next() throws -> Event? {
            do {
                return try step()
            } catch let error as MultipartError {
                throw fail(error)
            }
        }

        /// Runs transitions until one emits an event or needs input.
        private mutating func step() throws -> Event? {
            while true {
                switch state {
                case .failed(let failure):
                    throw failure.error
                case .preamble:
                    guard try readPreamble() || takePending() else { return nil }
                case .partStart:
                    try startPart()
                case .headers(var block):
                    state = .transitioning
                    if let head = try readHeaders(&block) { return head }
                    guard takePending() else { return nil }  // the block is not complete yet
                case .body(var part):
                    state = .transitioning
                    switch try readBody(&part) {
                    case .bytes(let bytes): return .bodyBytes(bytes)
                    case .delimiterAhead: continue
                    case .needInput: guard takePending() else { return nil }
                    }
                case .delimiter(let delimiter):
                    return consumeDelimiter(delimiter)
                case .end(let emptyForm):
                    return emitEnd(emptyForm: emptyForm)
                case .afterClose(let padding, let emptyForm):
                    guard try readAfterClose(padding: padding, emptyForm: emptyForm) || takePending() else {
                        return nil
                    }
                case .epilogue:
                    skipInput()
                    return nil
                case .finished:
                    return nil
                case .transitioning:
                    preconditionFailure("MultipartParser.next() re-entered a transition")
                }
            }
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
        package mutating func finish() throws {
            joinPending()
            switch state {
            case .failed(let failure):
                throw failure.error
            case .finished:
                return
            case .epilogue:
                state = .finished
            case .afterClose(let padding, let emptyForm):
                try finishAfterClose(padding: padding, emptyForm: emptyForm)
                state = .finished
            case .delimiter, .end:
                throw pendingEventsError()
            case .partStart:
                if bufferedByteCount > 0 { throw pendingEventsError() }
                throw fail(missingCloseDelimiter())
            case .preamble(let skipped):
                let message =
                    if inputEnd == 0 {
                        "empty body: not one byte arrived"
                    } else if let skipped {
                        "the body holds --\(boundary.value) at byte \(skipped) but never in a delimiter line "
                            + "(--\(boundary.value) alone on a line after CRLF, or at the start)"
                    } else {
                        "the body never contains the boundary \(String(reflecting: boundary.value))"
                    }
                throw fail(MultipartError(code: .boundaryNotFound, message: message, offset: inputEnd))
            case .headers(let block):
                if bufferedByteCount == 0 && block.scanned == 0 { throw fail(missingCloseDelimiter()) }
                throw fail(
                    MultipartError(
                        code: .truncated, message: "the body ended inside the headers of part \(partCount)",
                        offset: inputEnd, partIndex: partCount - 1))
            case .body(let part):
                throw fail(
                    MultipartError(
                        code: .truncated,
                        message: "the body ended inside part \(partCount) (\(part.bytes) body bytes read) "
                            + "before its closing boundary",
                        offset: inputEnd, partIndex: partCount - 1))
            case .transitioning:
                preconditionFailure("MultipartParser.finish() inside a transition")
            }
        }

        private func missingCloseDelimiter() -> MultipartError {
            MultipartError(
                code: .missingCloseDelimiter,
                message: "the body ended after part \(partCount) without the close delimiter --\(boundary.value)--",
                offset: inputEnd)
        }

        private func pendingEventsError() -> MultipartError {
            MultipartError(
                code: .invalidState,
                message: "finish() came while events were pending: drain next() until it returns nil",
                offset: bufferOffset)
        }

        // MARK: Helpers shared by the states

        /// The body offset just past the last byte appended.
        var inputEnd: Int64 { bufferOffset + Int64(bufferedByteCount) }

        /// The part being read, for errors: nil before the first part and after the close delimiter.
        var currentPartIndex: Int? {
            switch state {
            case .headers, .body, .delimiter: partCount - 1
            case .partStart: partCount
            default: nil
            }
        }

        /// Drops `count` bytes from the front of the buffer.
        mutating func consume(_ count: Int) {
            bufferOffset += Int64(count)
            if count == buffer.count {
                buffer = Input()  // release the chunk
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
            state = .failed(Failure(error))
            return error
        }
    }
}
