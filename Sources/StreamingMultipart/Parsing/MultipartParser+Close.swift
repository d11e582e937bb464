extension MultipartParser.Engine {
    /// `.end`: the body is complete.
    ///
    /// Transitions: to `.afterClose`; returns `.end`.
    mutating func emitEnd(emptyForm: Bool) -> Event {
        state = .afterClose(padding: 0, emptyForm: emptyForm)
        return .end
    }

    /// `.afterClose`: the transport padding and line break after `--boundary--`, consumed as they arrive; returns
    /// whether the state moved on.
    ///
    /// Transitions: to `.epilogue` at the line break, or at text on the close delimiter's line (lenient mode
    /// only); stays, counting `padding`, while blanks arrive. More than ``maxTransportPadding`` blanks are an error
    /// in strict mode and text after the close delimiter in lenient mode, so a flood of blanks is neither held nor
    /// rescanned.
    ///
    /// The close delimiter of an empty form (the body's first delimiter) ends as in strict mode in both modes: Go
    /// reads a first line of `--boundary--` with text or a bare LF after it as preamble, and reads on.
    mutating func readAfterClose(padding: Int, emptyForm: Bool) throws -> Bool {
        let lenient = mode == .lenient && !emptyForm
        var index = buffer.startIndex
        var padding = padding
        while index < buffer.endIndex, Self.isBlank(buffer[index]) {
            guard padding < MultipartParser.maxTransportPadding else {
                try textAfterClose(at: index, lenient: lenient)
                consume(index - buffer.startIndex)
                state = .epilogue
                return true
            }
            padding += 1
            index += 1
        }
        consume(index - buffer.startIndex)
        guard let first = buffer.first else {
            state = .afterClose(padding: padding, emptyForm: emptyForm)
            return false
        }
        switch first {
        case 0x0D:
            guard buffer.count >= 2 else {
                state = .afterClose(padding: padding, emptyForm: emptyForm)
                return false
            }
            if buffer[buffer.startIndex + 1] != 0x0A { try textAfterClose(at: buffer.startIndex, lenient: lenient) }
        case 0x0A:
            guard lenient else {
                throw MultipartError(
                    code: .invalidDelimiter,
                    message: mode == .strict
                        ? "the close delimiter ends in a bare LF; strict mode requires CRLF"
                        : "the close delimiter of an empty form ends in a bare LF, where Go reads a preamble line "
                            + "and reads on",
                    offset: bufferOffset)
            }
            quirks.insert(.lineFeedLineEndings)
        default:
            try textAfterClose(at: buffer.startIndex, lenient: lenient)
        }
        state = .epilogue
        return true
    }

    /// ``finish()`` in `.afterClose`: the body ended on the close delimiter's line, after at most the padding.
    mutating func finishAfterClose(padding: Int, emptyForm: Bool) throws {
        if buffer.isEmpty {
            quirks.insert(.missingFinalLineBreak)
        } else {
            // A lone CR: the line break was cut short.
            do {
                try textAfterClose(at: buffer.startIndex, lenient: mode == .lenient && !emptyForm)
            } catch let error as MultipartError {
                throw fail(error)
            }
        }
        consume(buffer.count)
    }

    private mutating func textAfterClose(at index: Int, lenient: Bool) throws {
        guard lenient else {
            throw MultipartError(
                code: .invalidDelimiter,
                message: mode == .strict
                    ? "text follows the close delimiter on its line; strict mode allows only "
                        + "\(MultipartParser.maxTransportPadding) blanks and a line break"
                    : "text follows the close delimiter of an empty form on its line, where Go reads a preamble "
                        + "line and reads on",
                offset: bodyOffset(index))
        }
        quirks.insert(.textAfterCloseDelimiter)
    }
}
