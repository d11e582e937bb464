extension MultipartParser {
    /// `.end`: the body is complete.
    ///
    /// Transitions: to `.afterClose`; returns `.end`.
    mutating func emitEnd() -> Event {
        state = .afterClose(padding: 0)
        return .end
    }

    /// `.afterClose`: the transport padding and line break after `--boundary--`, consumed as they arrive; returns
    /// whether the state moved on.
    ///
    /// Transitions: to `.epilogue` at the line break, or at text on the close delimiter's line (lenient mode
    /// only); stays, counting `padding`, while blanks arrive. More than ``maxTransportPadding`` blanks are an error
    /// in strict mode and text after the close delimiter in lenient mode, so a flood of blanks is neither held nor
    /// rescanned.
    mutating func readAfterClose(padding: Int) throws -> Bool {
        var index = buffer.startIndex
        var padding = padding
        while index < buffer.endIndex, Self.isBlank(buffer[index]) {
            guard padding < Self.maxTransportPadding else {
                try textAfterClose(at: index)
                consume(index - buffer.startIndex)
                state = .epilogue
                return true
            }
            padding += 1
            index += 1
        }
        consume(index - buffer.startIndex)
        guard let first = buffer.first else {
            state = .afterClose(padding: padding)
            return false
        }
        switch first {
        case 0x0D:
            guard buffer.count >= 2 else {
                state = .afterClose(padding: padding)
                return false
            }
            if buffer[buffer.startIndex + 1] != 0x0A { try textAfterClose(at: buffer.startIndex) }
        case 0x0A:
            guard mode == .lenient else {
                throw MultipartError(
                    code: .invalidDelimiter,
                    message: "the close delimiter ends in a bare LF; strict mode requires CRLF",
                    offset: bufferOffset)
            }
            quirks.insert(.lineFeedLineEndings)
        default:
            try textAfterClose(at: buffer.startIndex)
        }
        state = .epilogue
        return true
    }

    /// ``finish()`` in `.afterClose`: the body ended on the close delimiter's line, after at most the padding.
    mutating func finishAfterClose(padding: Int) throws {
        if buffer.isEmpty {
            quirks.insert(.missingFinalLineBreak)
        } else {
            // A lone CR: the line break was cut short.
            do {
                try textAfterClose(at: buffer.startIndex)
            } catch let error as MultipartError {
                throw fail(error)
            }
        }
        consume(buffer.count)
    }

    private mutating func textAfterClose(at index: Int) throws {
        guard mode == .lenient else {
            throw MultipartError(
                code: .invalidDelimiter,
                message: "text follows the close delimiter on its line; strict mode allows only "
                    + "\(Self.maxTransportPadding) blanks and a line break",
                offset: bodyOffset(index))
        }
        quirks.insert(.textAfterCloseDelimiter)
    }
}
