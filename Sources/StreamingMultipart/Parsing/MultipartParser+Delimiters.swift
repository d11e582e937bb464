// The readers of delimiters change no state, yet they are `mutating`: a call from a mutating method (the preamble and
// body states) to a non-mutating one copies the whole engine first (264 bytes, a `memcpy` a call), as `readHeaders`
// says of its helpers. Without those copies each of 100,000 small fields parses in 7% less time.
extension MultipartParser.Engine {
    /// What a `--boundary` found in the input is. Used by the preamble and body states; changes no state.
    enum DelimiterKind {
        /// `--`: the close delimiter. `length` counts from the delimiter's first byte through the `--`.
        case close(length: Int)
        /// Transport padding and a line break: a part follows. `length` counts through the line break.
        case part(length: Int)
        /// Data (or preamble) that every reader of the body also takes for data.
        case notDelimiter
        /// The buffer ends before the bytes that decide.
        case needInput
        /// A line that some reader of the body takes for a delimiter and others for data, or a malformed
        /// delimiter; thrown once the body bytes before it have been emitted, so that every chunking of the input
        /// yields the same events before the error. Boxed (a ``Failure``), so that the kind, and every
        /// `FoundDelimiter`, is a few words that cost nothing to drop: unboxed, the error made each part's body
        /// step call a destructor.
        case invalid(Failure)
    }

    /// A delimiter found in the buffer: where it starts, what it is, and the quirks it shows.
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

    /// What precedes a `--boundary`.
    enum LineStart: Equatable {
        /// The body's first byte.
        case bodyStart
        /// A part body's first byte: the header block's empty line is the only line break before it.
        case partBodyStart
        case crlf
        /// An LF that no CR precedes.
        case lineFeed
        /// A CR that no LF follows.
        case carriageReturn
        /// Any other byte (looked for in the preamble only: inside a part, every reader takes it for data).
        case midLine
    }

    /// What follows a `--boundary`; indexes are buffer indexes.
    enum Ending {
        /// `--`, ending at `end`.
        case close(end: Int)
        /// Transport padding and a line break (CRLF, or a bare LF) ending at `end`.
        case lineBreak(end: Int, bareLineFeed: Bool)
        /// Transport padding and a CR that no LF follows, at `at`.
        case bareCarriageReturn(at: Int)
        /// Transport padding, then another byte, at `at`.
        case paddedText(at: Int)
        /// Another byte right after the boundary: a longer line.
        case text
        /// More than ``MultipartParser/maxTransportPadding`` blanks; the first one too many is at `at`.
        case tooMuchPadding(at: Int)
        case needInput
    }

    /// Reads what follows a `--boundary` that ends at buffer index `end`.
    ///
    /// Transport padding is capped at ``maxTransportPadding``, so a flood of blanks after a boundary is an error
    /// after 64 bytes, never held or rescanned.
    mutating func readEnding(boundaryEnd end: Int) -> Ending {
        var index = end
        guard index < buffer.endIndex else { return .needInput }
        if buffer[index] == UInt8(ascii: "-") {
            guard index + 1 < buffer.endIndex else { return .needInput }
            return buffer[index + 1] == UInt8(ascii: "-") ? .close(end: index + 2) : .text
        }
        while index < buffer.endIndex, Self.isBlank(buffer[index]) {
            guard index - end < MultipartParser.maxTransportPadding else { return .tooMuchPadding(at: index) }
            index += 1
        }
        guard index < buffer.endIndex else { return .needInput }
        switch buffer[index] {
        case 0x0D:
            guard index + 1 < buffer.endIndex else { return .needInput }
            return buffer[index + 1] == 0x0A
                ? .lineBreak(end: index + 2, bareLineFeed: false) : .bareCarriageReturn(at: index)
        case 0x0A:
            return .lineBreak(end: index + 1, bareLineFeed: true)
        default:
            return index == end ? .text : .paddedText(at: index)
        }
    }

    /// Decides what a `--boundary` is from what precedes it (starting at buffer index `start`) and what follows it:
    /// the one place the parser's reading of delimiter lines is written down.
    ///
    /// The readers compared are Go's `mime/multipart`, Werkzeug, python-multipart, Python's `multipart` and Node's
    /// undici. They agree on a CRLF (or the body's start) followed by `--boundary`, padding and a CRLF or `--`, and
    /// on `--boundary` in the middle of a part's line being data. Elsewhere some read a delimiter where others read
    /// data: Werkzeug after a bare CR and before one, and mid-line in a preamble; Go, Werkzeug and python-multipart
    /// after a bare LF in a preamble, Werkzeug alone after one inside a part of a CRLF body; Go and python-multipart
    /// end a part at a boundary line with text after its padding; Go and Werkzeug end an empty part at a delimiter
    /// right after its header block, which python-multipart reads as data. A parser that read any of these as
    /// data would hide a part that another reader of the same body sees, so each is an error, with two exceptions
    /// in lenient mode: an LF is a line break in the preamble and, when the first delimiter line ended in a bare
    /// LF, in the whole body (as Go reads it), and the empty part is read as Go and Werkzeug read it.
    ///
    /// Strict mode also refuses a line that begins with the boundary but is no delimiter (RFC 2046 §5.1.1: the
    /// boundary may not begin a line inside a part) and, in a preamble, the boundary anywhere but in the first
    /// delimiter.
    mutating func decide(_ lineStart: LineStart, at start: Int, _ ending: Ending, inPreamble: Bool) -> DelimiterKind {
        // No local functions that build the errors: they capture the engine, and the parse of 100,000 small fields
        // from lent storage measured 3% slower with them.
        let strict = mode == .strict
        let lineFeedIsLineBreak = !strict && (inPreamble || lineFeedDelimiters)
        let atLineStart =
            switch lineStart {
            case .bodyStart, .partBodyStart, .crlf: true
            case .lineFeed: lineFeedIsLineBreak
            case .carriageReturn, .midLine: false
            }
        switch ending {
        case .needInput:
            return .needInput
        case .tooMuchPadding(let index):
            return invalid(
                "more than \(MultipartParser.maxTransportPadding) bytes of transport padding after a boundary", index,
                inPreamble: inPreamble)
        case .bareCarriageReturn(let index):
            return invalid(
                "a boundary line ends in a bare CR, which Werkzeug reads as a line break and other parsers as data",
                index, inPreamble: inPreamble)
        case .close(let end), .lineBreak(let end, _):
            switch lineStart {
            case .bodyStart, .crlf: break
            case .lineFeed where lineFeedIsLineBreak: break
            case .lineFeed where inPreamble:
                return invalid(
                    "a boundary line follows a bare LF, where Go, Werkzeug and python-multipart see the first "
                        + "delimiter; strict mode reads CRLF lines only (use lenient mode to read it as one)", start,
                    inPreamble: inPreamble)
            case .lineFeed:
                return invalid(
                    "a boundary line follows a bare LF in a body whose delimiter lines end in CRLF: Werkzeug reads a "
                        + "delimiter there, Go and python-multipart read data", start, inPreamble: inPreamble)
            case .carriageReturn:
                return invalid(
                    "a boundary line follows a bare CR, where Werkzeug and python-multipart see a delimiter and "
                        + "other parsers data", start, inPreamble: inPreamble)
            case .midLine:
                return invalid(
                    "the preamble holds the boundary in the middle of a line, which Werkzeug reads as the first "
                        + "delimiter", start, inPreamble: inPreamble)
            case .partBodyStart where strict:
                return invalid(
                    "part \(partCount)'s body begins with the delimiter, with no line break of its own: Go and "
                        + "Werkzeug read an empty part there, python-multipart reads the delimiter as data (use "
                        + "lenient mode to read an empty part)", start, inPreamble: inPreamble)
            case .partBodyStart:
                if case .close = ending {
                    return invalid(
                        "part \(partCount)'s body begins with the close delimiter, with no line break of its own: "
                            + "Go and Werkzeug end the body there, python-multipart reads it as data and reads on",
                        start, inPreamble: inPreamble)
                }
            }
            if case .lineBreak(_, bareLineFeed: true) = ending, strict {
                return invalid(
                    "a boundary line ends in a bare LF; strict mode requires CRLF (use lenient mode)", end - 1,
                    inPreamble: inPreamble)
            }
            if case .close = ending { return .close(length: end - start) }
            return .part(length: end - start)
        case .paddedText(let index):
            if atLineStart {
                return invalid(
                    "a boundary line has text after its transport padding, where Go and python-multipart end the "
                        + "part and fail", index, inPreamble: inPreamble)
            }
            if strict && inPreamble { return invalid(Self.preambleHoldsBoundary, start, inPreamble: inPreamble) }
            return .notDelimiter
        case .text:
            if strict && inPreamble { return invalid(Self.preambleHoldsBoundary, start, inPreamble: inPreamble) }
            if strict && atLineStart {
                return invalid(
                    "a line begins with the boundary but is not a delimiter (RFC 2046 §5.1.1; use lenient mode to "
                        + "read it as data)", start, inPreamble: inPreamble)
            }
            return .notDelimiter
        }
    }

    /// Why strict mode refuses the boundary in a preamble but in the first delimiter line.
    static var preambleHoldsBoundary: String {
        "the preamble holds the boundary; strict mode accepts it only in the first delimiter line (use lenient mode "
            + "to skip such a preamble)"
    }

    /// An `invalidDelimiter` error at buffer index `index`, in the part being read (none in the preamble).
    private mutating func invalid(_ message: String, _ index: Int, inPreamble: Bool) -> DelimiterKind {
        .invalid(
            Failure(
                MultipartError(
                    code: .invalidDelimiter, message: message, offset: bodyOffset(index),
                    partIndex: inPreamble ? nil : partCount - 1)))
    }

    /// Finds the first delimiter inside a part at or after buffer index `from`: where it starts (its line break)
    /// and what it is, or an error for a line some reader takes for a delimiter and this one would not. Returns
    /// nil when the buffer holds none; ``keepFrom(searchStart:)`` then says which bytes to hold back.
    mutating func findDelimiter(from: Int) -> FoundDelimiter? {
        var searchFrom = from
        while true {
            let longerLinesAreData = mode == .lenient
            let relativeFrom = searchFrom - buffer.startIndex
            let found = buffer.withSpan {
                scanner.firstLineMatch(in: $0, from: relativeFrom, longerLinesAreData: longerLinesAreData)
            }
            guard let relative = found else { return nil }
            let match = buffer.startIndex + relative
            var start = match
            let lineStart: LineStart
            if buffer[match] == 0x0D {
                lineStart = .carriageReturn
            } else if match > buffer.startIndex, buffer[match - 1] == 0x0D {
                (start, lineStart) = (match - 1, .crlf)
            } else {
                lineStart = .lineFeed
            }
            let ending = readEnding(boundaryEnd: match + 1 + scanner.dashBoundary.count)
            let kind = decide(lineStart, at: start, ending, inPreamble: false)
            if case .notDelimiter = kind {
                searchFrom = match + 1
                continue
            }
            return FoundDelimiter(start: start, kind: kind, quirks: Self.quirks(lineStart, ending))
        }
    }

    /// The quirks a delimiter shows: a bare LF before or after it (lenient mode).
    static func quirks(_ lineStart: LineStart, _ ending: Ending) -> Quirks {
        if lineStart == .lineFeed { return .lineFeedLineEndings }
        if case .lineBreak(_, bareLineFeed: true) = ending { return .lineFeedLineEndings }
        return []
    }

    /// The buffer index from which bytes may begin a delimiter inside a part that later input completes; everything
    /// before it can be released. Equal to `buffer.endIndex` when no suffix can.
    mutating func keepFrom(searchStart: Int) -> Int {
        let relativeStart = searchStart - buffer.startIndex
        let relative = buffer.withSpan { scanner.partialLineMatchStart(in: $0, from: relativeStart) }
        guard var keep = relative.map({ buffer.startIndex + $0 }) else { return buffer.endIndex }
        if buffer[keep] == 0x0A, keep > buffer.startIndex, buffer[keep - 1] == 0x0D { keep -= 1 }  // the CR of a CRLF
        return keep
    }

    /// A space or a tab: transport padding, and the blanks around header values.
    @inline(__always)
    static func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
}
