extension MultipartParser.Engine {
    /// `.partStart`: counts the part against ``Limits/maxParts``.
    ///
    /// Transitions: to `.headers` with an empty block.
    mutating func startPart() throws {
        guard partCount < limits.maxParts else {
            throw MultipartError(
                code: .limitExceeded, message: "the body has more than maxParts (\(limits.maxParts)) parts",
                offset: bufferOffset, partIndex: partCount, limit: "maxParts")
        }
        partCount += 1
        headerFields.removeAll(keepingCapacity: true)
        state = .headers(HeaderBlock())
    }

    /// `.headers`: parses header lines as they complete, and the part's head at the empty line that ends them.
    ///
    /// Each line is checked as soon as it is whole, so a body of endless headers stops at the first limit it
    /// reaches and a line that is no header is reported at once.
    ///
    /// Transitions: to `.body`, returning `.partHeaders`, at the empty line; stays (returning nil) while the block
    /// is incomplete. The caller has moved the block out of the state (`.transitioning`).
    ///
    /// The helpers it calls for every line are inlined, and those that read the buffer are `mutating`: a call from
    /// a mutating method to a non-mutating one may copy the whole parser first (264 bytes), which cost a fifth of a
    /// small part's time. Line fields are read through spans: an `ArraySlice` of the buffer retains it.
    mutating func readHeaders(_ block: inout HeaderBlock) throws -> Event? {
        let start = buffer.startIndex
        var lineStart = start + block.scanned
        while true {
            guard let lineBreak = indexOfLineBreak(from: lineStart) else {
                try checkHeaderSize(buffer.endIndex - start)
                block.scanned = lineStart - start
                state = .headers(block)
                return nil
            }
            let (contentEnd, next) = try lineEnd(lineStart: lineStart, lineBreak: lineBreak, quirks: &block.quirks)
            if contentEnd == lineStart {
                let head = try makeHead(block, lineBytes: lineStart - start)
                consume(next - start)
                // A multipart/mixed part holds files: it is bounded as one, and each file inside as one again.
                let isFile = head.isFile || head.mixedBoundary != nil
                state = .body(PartBody(limit: isFile ? limits.maxFileBytes : limits.maxFieldBytes, isFile: isFile))
                return .partHeaders(head)
            }
            if let field = try parseHeaderLine(lineStart..<contentEnd, into: &block) {
                headerFields.append(
                    ReceivedHead.Field(
                        start: lineStart - start, colon: field.colon - start, end: contentEnd - start,
                        next: next - start, kind: field.kind))
            }
            lineStart = next
        }
    }

    /// The first CR or LF at or after `index`, nil when there is none yet, or when it is a CR at the buffer's end
    /// (the byte after it decides whether it ends the line).
    @inline(__always)  // see readHeaders
    private func indexOfLineBreak(from index: Int) -> Int? {
        let start = buffer.startIndex
        guard index < buffer.endIndex,
            let found = buffer.withSpan({ ByteSearch.firstLineBreak(in: $0, from: index - start) }).map({ start + $0 }),
            buffer[found] == 0x0A || found + 1 < buffer.endIndex
        else { return nil }
        return found
    }

    /// Where the line whose first CR or LF is at `lineBreak` ends without its line break (`contentEnd`) and where
    /// the next line begins: a CRLF, or (lenient mode) a bare LF. The block's size is checked through the line
    /// break first, so that a limit is reported at the same byte for every chunking.
    ///
    /// - Throws: `.invalidHeader` for a bare CR (a CR-only line ending would hide a header from CRLF readers), or
    ///   a bare LF in strict mode; `.limitExceeded` for a block past ``Limits/maxHeaderBytesPerPart``.
    @inline(__always)  // and `mutating`, which it need not be: see readHeaders
    private mutating func lineEnd(
        lineStart: Int, lineBreak: Int, quirks: inout Quirks
    ) throws -> (contentEnd: Int, next: Int) {
        let isCRLF = buffer[lineBreak] == 0x0D && buffer[lineBreak + 1] == 0x0A
        let next = lineBreak + (isCRLF ? 2 : 1)
        try checkHeaderSize(next - buffer.startIndex)
        if isCRLF { return (lineBreak, next) }
        if buffer[lineBreak] == 0x0D {
            throw headerError("a header line holds a bare CR", offset: bodyOffset(lineStart))
        }
        guard mode == .lenient else {
            throw MultipartError(
                code: .invalidHeader,
                message: "a header line of part \(partCount) ends in a bare LF; strict mode "
                    + "requires CRLF (use lenient mode)", offset: bodyOffset(lineBreak), partIndex: partCount - 1)
        }
        quirks.insert(.lineFeedLineEndings)
        return (lineBreak, next)
    }

    @inline(__always)  // see readHeaders
    private func checkHeaderSize(_ size: Int) throws {
        guard size > limits.maxHeaderBytesPerPart else { return }
        throw MultipartError(
            code: .limitExceeded,
            message: "the headers of part \(partCount) are larger than maxHeaderBytesPerPart "
                + "(\(limits.maxHeaderBytesPerPart) bytes)",
            offset: bufferOffset + Int64(limits.maxHeaderBytesPerPart), partIndex: partCount - 1,
            limit: "maxHeaderBytesPerPart")
    }

    /// One pass over a header line's name: where the token characters before the colon end, and which header the
    /// parser treats specially it is.
    @inline(__always)  // see readHeaders
    private static func scanName(_ bytes: Span<UInt8>) -> (nameEnd: Int, kind: ReceivedHead.Kind) {
        if ByteSearch.hasPrefix(bytes, "Content-Disposition:") {
            return (19, .contentDisposition)  // the spelling every client sends: a token, no loop
        }
        var end = 0
        while end < bytes.count, MultipartHeaders.isTokenCharacter(bytes[end]) { end += 1 }
        guard end > 0, end < bytes.count, bytes[end] == UInt8(ascii: ":") else { return (end, .other) }
        return (end, ReceivedHead.Kind(bytes.extracting(..<end)))
    }

    /// Checks one whole header line, the buffer's bytes in `range` without the line break (a bare CR is already
    /// refused), and counts it in the block. Returns the field's colon and kind, or nil for a continuation line
    /// (obsolete folding, RFC 5322 §3.2.2), which is only checked here: `ReceivedHead.make` joins it to the previous
    /// value with one space, trimming each piece. The lines are read into the head only when the block is complete
    /// (``makeHead(_:lineBytes:)``).
    @inline(__always)  // and `mutating`, which it need not be: see readHeaders
    private mutating func parseHeaderLine(
        _ range: Range<Int>, into block: inout HeaderBlock
    ) throws -> (colon: Int, kind: ReceivedHead.Kind)? {
        let start = buffer.startIndex
        let lineRange = (range.lowerBound - start)..<(range.upperBound - start)
        let offset = bodyOffset(range.lowerBound)
        // NUL and other control bytes are kept (the conformance suite expects them in names; applications
        // decide). One pass over the name: token characters up to the colon.
        let (continues, nameEnd, kind, isField) = buffer.withSpan { bytes in
            let line = bytes.extracting(lineRange)  // no retain
            if Self.isBlank(line[0]) { return (true, 0, ReceivedHead.Kind.other, false) }
            let (nameEnd, kind) = Self.scanName(line)
            return (false, nameEnd, kind, nameEnd > 0 && nameEnd < line.count && line[nameEnd] == UInt8(ascii: ":"))
        }
        if continues {
            guard !headerFields.isEmpty else {
                throw headerError("the first header line is a continuation", offset: offset)
            }
            block.quirks.insert(.headerFolding)
            return nil
        }
        guard isField else {
            let text = buffer.copy(range)[...]
            guard let colon = text.firstIndex(of: UInt8(ascii: ":")) else {
                throw headerError("the header line \(Self.quoted(text)) has no ':'", offset: offset)
            }
            throw headerError("the header name \(Self.quoted(text[..<colon])) is not an RFC 9110 token", offset: offset)
        }
        guard headerFields.count < limits.maxHeadersPerPart else {
            throw MultipartError(
                code: .limitExceeded,
                message: "part \(partCount) has more than maxHeadersPerPart (\(limits.maxHeadersPerPart)) headers",
                offset: offset, partIndex: partCount - 1, limit: "maxHeadersPerPart")
        }
        switch kind {
        case .contentDisposition: block.dispositions += 1
        case .contentType: block.contentTypes += 1
        case .other: break
        }
        return (range.lowerBound + nameEnd, kind)
    }

    /// The part's head from its complete header block, whose lines are the first `lineBytes` bytes of the buffer:
    /// repeats resolved, `Content-Disposition` parsed and checked, the block's quirks recorded.
    private mutating func makeHead(_ block: HeaderBlock, lineBytes: Int) throws -> MultipartParser.PartHead {
        var quirks = block.quirks
        let repeated =
            block.dispositions > 1
            ? MultipartHeaders.Name.contentDisposition
            : block.contentTypes > 1 ? MultipartHeaders.Name.contentType : nil
        if let repeated {
            // `Content-Disposition` and `Content-Type` may appear once: strict mode refuses a repeat, lenient mode
            // keeps the last of each.
            guard mode == .lenient else {
                throw MultipartError(
                    code: .duplicateHeader, message: "part \(partCount) has more than one \(repeated) header",
                    offset: bufferOffset, partIndex: partCount - 1)
            }
            quirks.insert(.duplicateHeaders)
        }
        guard block.dispositions > 0 else {
            throw MultipartError(
                code: .missingContentDisposition,
                message: "part \(partCount) has no Content-Disposition header (RFC 7578 §4.2)",
                offset: bufferOffset, partIndex: partCount - 1)
        }
        let dropping = (max(block.dispositions - 1, 0), max(block.contentTypes - 1, 0))
        let (index, maxParameters) = (partCount - 1, limits.maxParametersPerHeader)
        let head: ReceivedHead
        do {
            head = try buffer.withSpan { bytes in
                try ReceivedHead.make(
                    index: index, lines: bytes.extracting(..<lineBytes), fields: headerFields.span,
                    dropping: dropping, maxParameters: maxParameters)
            }
        } catch var error as MultipartError {
            if error.code == .limitExceeded {
                error.message =
                    "the Content-Disposition of part \(partCount) has more than maxParametersPerHeader "
                    + "(\(limits.maxParametersPerHeader)) parameters"
            } else {
                error.message = "part \(partCount): \(error.message)"
            }
            error.offset = bufferOffset
            error.partIndex = partCount - 1
            throw error
        }
        let info = head.info
        if let mixedFieldName {
            // Inside a multipart/mixed part: `attachment` or `file` and no name, as RFC 2388 §4.2 has it; the
            // files are the outer field's.
            self.quirks.formUnion(quirks)
            var named = MultipartParser.PartHead(received: head)
            var disposition = ContentDisposition(name: mixedFieldName, filename: named.filename)
            disposition.filenameStar = named.filenameStar
            named.disposition = disposition
            return named
        }
        if !info.isFormData {
            guard mode == .lenient else {
                let type = head.withDisposition { String(decodingUTF8: $0.extracting(info.type)) }
                throw headerError(
                    "the Content-Disposition type is \(String(reflecting: type.lowercased())), not form-data",
                    offset: bufferOffset)
            }
            quirks.insert(.otherDispositionType)
        }
        guard info.name != nil else {
            throw MultipartError(
                code: .missingName,
                message: "the Content-Disposition of part \(partCount) has no name (RFC 7578 §4.2)",
                offset: bufferOffset, partIndex: partCount - 1)
        }
        self.quirks.formUnion(quirks)
        return MultipartParser.PartHead(received: head)
    }

    private func headerError(_ message: String, offset: Int64) -> MultipartError {
        MultipartError(
            code: .invalidHeader, message: "part \(partCount): \(message)", offset: offset, partIndex: partCount - 1
        )
    }

    private static func quoted(_ bytes: ArraySlice<UInt8>) -> String {
        String(reflecting: String(decoding: bytes.prefix(80), as: UTF8.self))
    }
}
