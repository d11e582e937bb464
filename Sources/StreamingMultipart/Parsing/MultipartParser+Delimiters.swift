extension MultipartParser {
    /// What follows `--boundary` at some position. Used by the preamble and body states; changes no state.
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

    /// A delimiter found in the buffer: where it starts, what follows it, and the quirks it shows.
    struct FoundDelimiter {
        let start: Int
        let kind: DelimiterKind
        let quirks: Quirks

        /// The ``Delimiter`` to consume, for a whole one.
        var delimiter: Delimiter? {
            switch kind {
            case .part(let length): Delimiter(length: length, closes: false, quirks: quirks)
            case .close(let length): Delimiter(length: length, closes: true, quirks: quirks)
            case .notDelimiter, .needInput, .invalid: nil
            }
        }
    }

    /// Reads what follows a `--boundary` that ends at buffer index `end`; `start` is where the delimiter began.
    ///
    /// Transport padding is capped at ``maxTransportPadding``, so a flood of blanks after a boundary is an error
    /// after 64 bytes, never held or rescanned.
    func classifyDelimiter(from start: Int, boundaryEnd end: Int) -> DelimiterKind {
        var index = end
        guard index < buffer.endIndex else { return .needInput }
        if buffer[index] == UInt8(ascii: "-") {
            guard index + 1 < buffer.endIndex else { return .needInput }
            return buffer[index + 1] == UInt8(ascii: "-") ? .close(length: index + 2 - start) : .notDelimiter
        }
        while index < buffer.endIndex, Self.isBlank(buffer[index]) {
            guard index - end < Self.maxTransportPadding else {
                return .invalid(
                    MultipartError(
                        code: .invalidDelimiter,
                        message: "more than \(Self.maxTransportPadding) bytes of transport padding after a boundary",
                        offset: bodyOffset(index)))
            }
            index += 1
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
    func findDelimiter(from: Int) -> FoundDelimiter? {
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
            let quirks: Quirks = mode == .lenient && start == match ? .lineFeedLineEndings : []
            return FoundDelimiter(start: start, kind: kind, quirks: quirks)
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

    /// A space or a tab: transport padding, and the blanks around header values.
    @inline(__always)
    static func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
}
