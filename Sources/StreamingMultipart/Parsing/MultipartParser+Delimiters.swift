extension MultipartParser {
    /// What follows `--boundary` at some position.
    enum DelimiterKind {
        /// `--`: the close delimiter. `length` counts from the delimiter's first byte through the `--`.
        case close(length: Int)
        /// Transport padding and a line break: a part follows. `length` counts through the line break.
        case part(length: Int)
        /// Other bytes: `--boundary` was only the start of a longer line, which is data.
        case notDelimiter
        /// The buffer ends before the bytes that decide.
        case needInput
        /// A malformed delimiter; thrown once the body bytes before it have been emitted, so that every chunking
        /// of the input yields the same events before the error.
        case invalid(MultipartError)
    }

    /// The most transport padding (spaces and tabs) accepted after a boundary.
    static let maxTransportPadding = 64

    /// Reads what follows a `--boundary` that ends at buffer index `end`; `start` is where the delimiter began.
    func classifyDelimiter(from start: Int, boundaryEnd end: Int) -> DelimiterKind {
        var index = end
        guard index < buffer.endIndex else { return .needInput }
        if buffer[index] == UInt8(ascii: "-") {
            guard index + 1 < buffer.endIndex else { return .needInput }
            return buffer[index + 1] == UInt8(ascii: "-") ? .close(length: index + 2 - start) : .notDelimiter
        }
        while index < buffer.endIndex, buffer[index] == UInt8(ascii: " ") || buffer[index] == UInt8(ascii: "\t") {
            index += 1
            guard index - end <= Self.maxTransportPadding else {
                return .invalid(
                    MultipartError(
                        code: .invalidDelimiter,
                        message: "more than \(Self.maxTransportPadding) bytes of transport padding after a boundary",
                        offset: bodyOffset(index)))
            }
        }
        guard index < buffer.endIndex else { return .needInput }
        switch buffer[index] {
        case 0x0D:
            guard index + 1 < buffer.endIndex else { return .needInput }
            guard buffer[index + 1] == 0x0A else { return .notDelimiter }
            return .part(length: index + 2 - start)
        case 0x0A:
            guard mode == .lenient else {
                return .invalid(
                    MultipartError(
                        code: .invalidDelimiter,
                        message: "a boundary line ends in a bare LF; strict mode requires CRLF (use lenient mode)",
                        offset: bodyOffset(index)))
            }
            return .part(length: index + 1 - start)
        default:
            return .notDelimiter
        }
    }

    /// Finds the first delimiter at or after buffer index `from`: where it starts (its CR, or its LF in lenient
    /// mode when no CR precedes it) and what follows it. Returns nil when the buffer holds no whole
    /// `CRLF--boundary`; ``keepFrom(searchStart:)`` then says which bytes to hold back.
    mutating func findDelimiter(from: Int) -> (start: Int, kind: DelimiterKind)? {
        var searchFrom = from
        while true {
            let found = buffer.withUnsafeBytes { scanner.firstMatch(in: $0, from: searchFrom - buffer.startIndex) }
            guard let relative = found else { return nil }
            let match = buffer.startIndex + relative
            var start = match
            if mode == .lenient, match > buffer.startIndex, buffer[match - 1] == 0x0D { start = match - 1 }
            let kind = classifyDelimiter(from: start, boundaryEnd: match + scanner.pattern.count)
            if case .notDelimiter = kind {
                searchFrom = match + 1
                continue
            }
            switch kind {
            case .part, .close: if mode == .lenient && start == match { quirks.insert(.lineFeedLineEndings) }
            case .needInput, .invalid, .notDelimiter: break
            }
            return (start, kind)
        }
    }

    /// The buffer index from which bytes may begin a delimiter that later input completes; everything before it
    /// can be released. Equal to `buffer.endIndex` when no suffix can.
    func keepFrom(searchStart: Int) -> Int {
        let relative = buffer.withUnsafeBytes { bytes -> Int? in
            scanner.partialMatchStart(in: bytes, from: searchStart - buffer.startIndex)
        }
        if var keep = relative.map({ buffer.startIndex + $0 }) {
            if mode == .lenient, keep > searchStart, buffer[keep - 1] == 0x0D { keep -= 1 }
            return keep
        }
        // A final CR may be the first byte of a CRLF that lenient mode's LF pattern has not seen yet.
        if mode == .lenient, let last = buffer.last, last == 0x0D, buffer.endIndex - 1 >= searchStart {
            return buffer.endIndex - 1
        }
        return buffer.endIndex
    }

    // MARK: States

    /// `.preamble`: finds the first delimiter; returns whether the state moved on.
    mutating func skipPreamble() throws -> Bool {
        // A body that starts with `--boundary` has an empty preamble and no line break before it.
        if bufferOffset == 0, buffer.starts(with: dashBoundary.prefix(min(buffer.count, dashBoundary.count))) {
            guard buffer.count >= dashBoundary.count else { return false }  // the rest of `--boundary` may follow
            let kind = classifyDelimiter(from: buffer.startIndex, boundaryEnd: buffer.startIndex + dashBoundary.count)
            switch kind {
            case .needInput: return false
            case .notDelimiter: break
            case .invalid(let error): throw error
            case .part, .close: return try enterFirstDelimiter(kind)
            }
        }
        guard let (start, kind) = findDelimiter(from: buffer.startIndex) else {
            consume(keepFrom(searchStart: buffer.startIndex) - buffer.startIndex)  // skip the preamble in blocks
            return false
        }
        if case .needInput = kind {
            consume(start - buffer.startIndex)
            return false
        }
        if case .invalid(let error) = kind { throw error }
        let preambleLength = bodyOffset(start)
        quirks.insert(preambleLength == 0 ? .leadingLineBreak : .preamble)
        consume(start - buffer.startIndex)
        return try enterFirstDelimiter(kind)
    }

    /// Consumes the first delimiter and moves to the first part or, for an empty body, to `.closed`.
    private mutating func enterFirstDelimiter(_ kind: DelimiterKind) throws -> Bool {
        switch kind {
        case .part(let length):
            consume(length)
            try beginPart()
            return true
        case .close(let length):
            consume(length)
            closed = true
            state = .closed
            return true
        case .notDelimiter, .needInput, .invalid:
            return false
        }
    }

    enum BodyStep {
        case bytes(ArraySlice<UInt8>)
        case delimiterAhead
        case needInput
    }

    /// `.body`: emits bytes up to the next delimiter, or up to what may begin one.
    ///
    /// Errors in the body (a malformed delimiter, a part over its limit) are thrown only after every body byte
    /// before them has been emitted, so the events before an error do not depend on how the input was chunked.
    mutating func readBody() throws -> BodyStep {
        let start = buffer.startIndex
        var end: Int
        var pendingError: MultipartError?
        if let (delimiterStart, kind) = findDelimiter(from: start) {
            switch kind {
            case .part(let length):
                state = .delimiter(length: length, closes: false)
            case .close(let length):
                closed = true
                state = .delimiter(length: length, closes: true)
            case .invalid(let error):
                pendingError = error
            case .notDelimiter, .needInput:
                break
            }
            end = delimiterStart
        } else {
            end = keepFrom(searchStart: start)
        }
        if end > start {
            let limit = partIsFile ? limits.maxFileBytes : limits.maxFieldBytes
            if partBytes == limit { throw limitError(limit) }
            if partBytes + Int64(end - start) > limit {
                end = start + Int(limit - partBytes)  // up to the limit now; the error on the next call
                if case .delimiter = state { state = .body }
                if closed { closed = false }
            }
            partBytes += Int64(end - start)
            let bytes = buffer[start..<end]
            consume(end - start)
            return .bytes(bytes)
        }
        if let pendingError { throw pendingError }
        if case .delimiter = state { return .delimiterAhead }
        return .needInput
    }

    private func limitError(_ limit: Int64) -> MultipartError {
        MultipartError(
            code: .limitExceeded,
            message: "part \(partCount - 1) is larger than \(partIsFile ? "maxFileBytes" : "maxFieldBytes") "
                + "(\(limit) bytes)",
            offset: bufferOffset, partIndex: partCount - 1)
    }

    /// `.afterClose`: transport padding, then a line break or the end of the input.
    mutating func readAfterClose() throws -> Bool {
        var index = buffer.startIndex
        while index < buffer.endIndex, buffer[index] == UInt8(ascii: " ") || buffer[index] == UInt8(ascii: "\t") {
            index += 1
        }
        guard index < buffer.endIndex else { return false }
        switch buffer[index] {
        case 0x0D:
            guard index + 1 < buffer.endIndex else { return false }
            if buffer[index + 1] != 0x0A { try textAfterClose(at: index) }
        case 0x0A:
            guard mode == .lenient else {
                throw MultipartError(
                    code: .invalidDelimiter, message: "the close delimiter ends in a bare LF; strict mode requires CRLF",
                    offset: bodyOffset(index))
            }
            quirks.insert(.lineFeedLineEndings)
        default:
            try textAfterClose(at: index)
        }
        state = .epilogue
        return true
    }

    private mutating func textAfterClose(at index: Int) throws {
        guard mode == .lenient else {
            throw MultipartError(
                code: .invalidDelimiter,
                message: "text follows the close delimiter on its line; strict mode requires a line break",
                offset: bodyOffset(index))
        }
        quirks.insert(.textAfterCloseDelimiter)
    }
}
