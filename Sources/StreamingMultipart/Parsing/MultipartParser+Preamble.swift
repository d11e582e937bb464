extension MultipartParser {
    /// `.preamble`: skips bytes up to the first delimiter, a chunk at a time; returns whether the state moved on.
    ///
    /// Transitions: to `.partStart` after a delimiter line, to `.end` after a close delimiter (an empty form);
    /// stays, holding only what may begin a delimiter, while none is whole.
    mutating func readPreamble() throws -> Bool {
        // A body that starts with `--boundary` has an empty preamble and no line break before it.
        if bufferOffset == 0, buffer.starts(with: dashBoundary.prefix(min(buffer.count, dashBoundary.count))) {
            guard buffer.count >= dashBoundary.count else { return false }  // the rest of `--boundary` may follow
            let kind = classifyDelimiter(from: buffer.startIndex, boundaryEnd: buffer.startIndex + dashBoundary.count)
            switch kind {
            case .needInput: return false
            case .notDelimiter: break
            case .invalid(let error): throw error
            case .part(let length): return enterFirstPart(afterDelimiterOf: length)
            case .close(let length): return enterEmptyForm(afterDelimiterOf: length)
            }
        }
        guard let found = findDelimiter(from: buffer.startIndex) else {
            consume(keepFrom(searchStart: buffer.startIndex) - buffer.startIndex)  // skip the preamble in blocks
            return false
        }
        if case .invalid(let error) = found.kind { throw error }
        consume(found.start - buffer.startIndex)
        guard let delimiter = found.delimiter else { return false }  // needs input: held from its start
        quirks.formUnion(found.quirks)
        quirks.insert(bufferOffset == 0 ? .leadingLineBreak : .preamble)
        return delimiter.closes
            ? enterEmptyForm(afterDelimiterOf: delimiter.length) : enterFirstPart(afterDelimiterOf: delimiter.length)
    }

    private mutating func enterFirstPart(afterDelimiterOf length: Int) -> Bool {
        consume(length)
        state = .partStart
        return true
    }

    private mutating func enterEmptyForm(afterDelimiterOf length: Int) -> Bool {
        consume(length)
        state = .end
        return true
    }
}
