extension MultipartParser.Engine {
    /// `.preamble`: skips bytes up to the first delimiter, a chunk at a time; returns whether the state moved on.
    ///
    /// Every `--boundary` in the preamble is looked at, wherever it is on its line, since readers differ on which
    /// of them begins the body (see ``decide(_:at:_:inPreamble:)``): the first that is a delimiter line ends the
    /// preamble, and one that some reader would take for the first delimiter while this one skipped it is an
    /// error.
    ///
    /// Transitions: to `.partStart` after a delimiter line, to `.end` after a close delimiter (an empty form);
    /// stays, holding only what may begin a delimiter and the two bytes before it, while none is whole.
    mutating func readPreamble() throws -> Bool {
        let count = scanner.dashBoundary.count
        var searchFrom = buffer.startIndex
        while true {
            let relativeFrom = searchFrom - buffer.startIndex
            let found = buffer.withSpan { scanner.firstMatch(in: $0, from: relativeFrom) }
            guard let relative = found else {
                // Skip the preamble in blocks, holding what may begin a boundary and the line break before it.
                consume(max(0, buffer.count - (count - 1) - 2))
                return false
            }
            let match = buffer.startIndex + relative
            let (lineStart, start) = lineStartInPreamble(before: match)
            let ending = readEnding(boundaryEnd: match + count)
            let kind = decide(lineStart, at: start, ending, inPreamble: true)
            switch kind {
            case .notDelimiter:
                if case .preamble(skippedBoundary: nil) = state {
                    state = .preamble(skippedBoundary: bodyOffset(match))
                }
                searchFrom = match + 1
                continue
            case .needInput:
                consume(max(buffer.startIndex, match - 2) - buffer.startIndex)  // its line break stays to be read
                return false
            case .invalid(let failure):
                throw failure.error
            case .part(let length), .close(let length):
                consume(start - buffer.startIndex)
                if bufferOffset > 0 || lineStart != .bodyStart {
                    quirks.insert(bufferOffset == 0 ? .leadingLineBreak : .preamble)
                }
                quirks.formUnion(Self.quirks(lineStart, ending))
                if case .lineBreak(_, bareLineFeed: true) = ending { lineFeedDelimiters = true }  // lenient only
                consume(length)
                if case .close = kind {
                    state = .end(emptyForm: true)
                } else {
                    state = .partStart
                }
                return true
            }
        }
    }

    /// What precedes the `--boundary` at buffer index `match`, and where the delimiter would start. The two bytes
    /// before a possible match are never consumed while the preamble is skipped, so they are in the buffer.
    private func lineStartInPreamble(before match: Int) -> (LineStart, Int) {
        if bodyOffset(match) == 0 { return (.bodyStart, match) }
        guard match > buffer.startIndex else { return (.midLine, match) }
        switch buffer[match - 1] {
        case 0x0A:
            if match - 1 > buffer.startIndex, buffer[match - 2] == 0x0D { return (.crlf, match - 2) }
            return (.lineFeed, match - 1)
        case 0x0D:
            return (.carriageReturn, match - 1)
        default:
            return (.midLine, match)
        }
    }
}
