extension MultipartParser.Engine {
    /// What one `.body` transition did.
    enum BodyStep {
        case bytes(Input)
        case delimiterAhead
        case needInput
    }

    /// `.body`: emits bytes up to the next delimiter, or up to what may begin one.
    ///
    /// Transitions: to `.delimiter` once the delimiter that ends the part is found (after the bytes before it are
    /// emitted); stays otherwise. The caller has moved the part out of the state (`.transitioning`).
    ///
    /// A body that begins with `--boundary` is empty: the header block's final line break doubles as the
    /// delimiter's, as some clients send an empty value and as Go reads it. It is never read as data, which would
    /// merge this part with the next one.
    ///
    /// Errors in the body (a malformed delimiter, a part over its limit) are thrown only after every body byte
    /// before them has been emitted, so the events before an error do not depend on how the input was chunked.
    mutating func readBody(_ part: inout PartBody) throws -> BodyStep {
        if part.bytes == 0, let step = try readDelimiterAtBodyStart() {
            if case .needInput = step { state = .body(part) }
            return step
        }
        let start = buffer.startIndex
        var end: Int
        var next = State.body(part)
        var pendingError: Failure?
        if let found = findDelimiter(from: start) {
            if let delimiter = found.delimiter {
                next = .delimiter(delimiter)
            } else if case .invalid(let failure) = found.kind {
                pendingError = failure
            }
            end = found.start
        } else {
            end = keepFrom(searchStart: start)
        }
        guard end > start else {
            state = next
            if let pendingError { throw pendingError.error }
            if case .delimiter = next { return .delimiterAhead }
            return .needInput
        }
        if part.bytes == part.limit { throw limitError(part) }
        if part.bytes + Int64(end - start) > part.limit {
            end = start + Int(part.limit - part.bytes)  // up to the limit now; the error on the next call
            next = .body(part)
        }
        let bytes = buffer[start..<end]
        consume(end - start)
        part.bytes += Int64(bytes.count)
        if case .body = next { next = .body(part) }
        state = next
        return .bytes(bytes)
    }

    /// `.delimiter`: consumes the delimiter that ends the part and records its quirks.
    ///
    /// Transitions: to `.partStart`, or to `.end` for the close delimiter; returns `.partEnd`.
    mutating func consumeDelimiter(_ delimiter: Delimiter) -> Event {
        consume(delimiter.length)
        quirks.formUnion(delimiter.quirks)
        state = delimiter.closes ? .end(emptyForm: false) : .partStart
        return .partEnd
    }

    /// At the start of a body: the delimiter that ends an empty part without a line break of its own, if the buffer
    /// begins with one. Returns nil when it does not (the body is read as usual).
    ///
    /// Go and Werkzeug read such a delimiter as the end of an empty part; python-multipart reads it as the part's
    /// data, which would merge this part with the next. Strict mode refuses it, lenient mode reads an empty part.
    private mutating func readDelimiterAtBodyStart() throws -> BodyStep? {
        let count = scanner.dashBoundary.count
        let prefix = min(buffer.count, count)
        guard buffer.hasPrefix(scanner.dashBoundary[..<prefix]) else { return nil }
        guard prefix == count else { return .needInput }
        let start = buffer.startIndex
        let ending = readEnding(boundaryEnd: start + count)
        let delimiter: Delimiter
        let quirks = Self.quirks(.partBodyStart, ending).union(.delimiterAfterHeaders)
        switch decide(.partBodyStart, at: start, ending, inPreamble: false) {
        case .part(let length): delimiter = Delimiter(length: length, closes: false, quirks: quirks)
        case .close(let length): delimiter = Delimiter(length: length, closes: true, quirks: quirks)
        case .needInput: return .needInput
        case .invalid(let failure): throw failure.error
        case .notDelimiter: return nil
        }
        state = .delimiter(delimiter)
        return .delimiterAhead
    }

    private func limitError(_ part: PartBody) -> MultipartError {
        MultipartError(
            code: .limitExceeded,
            message: "part \(partCount) is larger than \(part.isFile ? "maxFileBytes" : "maxFieldBytes") "
                + "(\(part.limit) bytes)",
            offset: bufferOffset, partIndex: partCount - 1, limit: part.isFile ? "maxFileBytes" : "maxFieldBytes")
    }
}
