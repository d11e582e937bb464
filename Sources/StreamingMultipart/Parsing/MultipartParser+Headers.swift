extension MultipartParser {
    /// `.partStart`: counts the part against ``Limits/maxParts``.
    ///
    /// Transitions: to `.headers` with an empty block.
    mutating func startPart() throws {
        guard partCount < limits.maxParts else {
            throw MultipartError(
                code: .limitExceeded, message: "the body has more than maxParts (\(limits.maxParts)) parts",
                offset: bufferOffset, partIndex: partCount)
        }
        partCount += 1
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
    /// The helpers it calls for every line are inlined: a call from a mutating method to a non-inlined
    /// non-mutating one copies the whole parser first (184 bytes), which cost a fifth of a small part's time.
    mutating func readHeaders(_ block: inout HeaderBlock) throws -> Event? {
        let start = buffer.startIndex
        var lineStart = start + block.scanned
        while true {
            guard let newline = indexOfLineFeed(from: lineStart) else {
                try checkHeaderSize(buffer.endIndex - start)
                block.scanned = lineStart - start
                state = .headers(block)
                return nil
            }
            try checkHeaderSize(newline + 1 - start)
            let contentEnd = try lineContentEnd(lineStart: lineStart, newline: newline, quirks: &block.quirks)
            if contentEnd == lineStart {
                let head = try makeHead(block, lineBytes: lineStart - start)
                consume(newline + 1 - start)
                // A multipart/mixed part holds files: it is bounded as one, and each file inside as one again.
                let isFile = head.isFile || head.mixedBoundary != nil
                state = .body(PartBody(limit: isFile ? limits.maxFileBytes : limits.maxFieldBytes, isFile: isFile))
                return .partHeaders(head)
            }
            try parseHeaderLine(lineStart..<contentEnd, into: &block)
            lineStart = newline + 1
        }
    }

    @inline(__always)  // see readHeaders
    private func indexOfLineFeed(from index: Int) -> Int? {
        guard index < buffer.endIndex else { return nil }
        let start = buffer.startIndex
        return ByteSearch.firstIndex(of: 0x0A, in: buffer.span, from: index - start).map { start + $0 }
    }

    /// Where the line that ends with the LF at `newline` ends without its line break: before a CR, or (lenient
    /// mode) at a bare LF.
    @inline(__always)  // see readHeaders
    private func lineContentEnd(lineStart: Int, newline: Int, quirks: inout Quirks) throws -> Int {
        if newline > lineStart, buffer[newline - 1] == 0x0D { return newline - 1 }
        guard mode == .lenient else {
            throw MultipartError(
                code: .invalidHeader,
                message: "a header line of part \(partCount) ends in a bare LF; strict mode "
                    + "requires CRLF (use lenient mode)", offset: bodyOffset(newline), partIndex: partCount - 1)
        }
        quirks.insert(.lineFeedLineEndings)
        return newline
    }

    @inline(__always)  // see readHeaders
    private func checkHeaderSize(_ size: Int) throws {
        guard size > limits.maxHeaderBytesPerPart else { return }
        throw MultipartError(
            code: .limitExceeded,
            message: "the headers of part \(partCount) are larger than maxHeaderBytesPerPart "
                + "(\(limits.maxHeaderBytesPerPart) bytes)",
            offset: bufferOffset + Int64(limits.maxHeaderBytesPerPart), partIndex: partCount - 1)
    }

    /// One pass over a header line's name: where the token characters before the colon end, whether the line holds
    /// a CR, and which header the parser treats specially it is.
    @inline(__always)  // see readHeaders
    private static func scanName(_ bytes: Span<UInt8>) -> (nameEnd: Int, hasCR: Bool, kind: ReceivedHead.Kind) {
        if ByteSearch.firstIndex(of: 0x0D, in: bytes) != nil { return (0, true, .other) }
        if ByteSearch.hasPrefix(bytes, "Content-Disposition:") {
            return (19, false, .contentDisposition)  // the spelling every client sends: a token, no loop
        }
        var end = 0
        while end < bytes.count, MultipartHeaders.isTokenCharacter(bytes[end]) { end += 1 }
        guard end > 0, end < bytes.count, bytes[end] == UInt8(ascii: ":") else { return (end, false, .other) }
        return (end, false, ReceivedHead.Kind(bytes.extracting(..<end)))
    }

    /// Checks one whole header line, the buffer's bytes in `range` without the line break, and counts it in the
    /// block. The line is read into the head only when the block is complete (``makeHead(_:lineBytes:)``).
    ///
    /// A continuation line (obsolete folding, RFC 5322 §3.2.2) is only checked here; `ReceivedHead.make` joins it
    /// to the previous value with one space, trimming each piece.
    @inline(__always)  // see readHeaders
    private func parseHeaderLine(_ range: Range<Int>, into block: inout HeaderBlock) throws {
        let line = buffer[range]  // taken here, not passed in: an argument sliced from the buffer copies the parser
        let offset = bodyOffset(line.startIndex)
        // NUL and other control bytes are kept (the conformance suite expects them in names; applications
        // decide); a bare CR is refused, since a CR-only line ending would hide a header from CRLF readers.
        // One pass over the name: token characters up to the colon.
        let (nameEnd, hasCR, kind) = Self.scanName(line.span)
        if hasCR { throw headerError("a header line holds a bare CR", offset: offset) }
        if Self.isBlank(line[line.startIndex]) {
            guard block.fields > 0 else {
                throw headerError("the first header line is a continuation", offset: offset)
            }
            block.quirks.insert(.headerFolding)
            return
        }
        let colon = line.startIndex + nameEnd
        guard colon < line.endIndex, line[colon] == UInt8(ascii: ":"), nameEnd > 0 else {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                throw headerError("the header line \(Self.quoted(line)) has no ':'", offset: offset)
            }
            throw headerError("the header name \(Self.quoted(line[..<colon])) is not an RFC 9110 token", offset: offset)
        }
        guard block.fields < limits.maxHeadersPerPart else {
            throw MultipartError(
                code: .limitExceeded,
                message: "part \(partCount) has more than maxHeadersPerPart (\(limits.maxHeadersPerPart)) headers",
                offset: offset, partIndex: partCount - 1)
        }
        block.fields += 1
        switch kind {
        case .contentDisposition: block.dispositions += 1
        case .contentType: block.contentTypes += 1
        case .other: break
        }
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
        let (index, fieldCount) = (partCount - 1, block.fields - dropping.0 - dropping.1)
        let maxParameters = limits.maxParametersPerHeader
        let head: ReceivedHead
        do {
            head = try ReceivedHead.make(
                index: index, lines: buffer.span.extracting(..<lineBytes), fieldCount: fieldCount,
                dropping: dropping, maxParameters: maxParameters)
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
