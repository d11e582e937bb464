#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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
                let head = try makeHead(&block)
                consume(newline + 1 - start)
                state = .body(PartBody(limit: head.isFile ? limits.maxFileBytes : limits.maxFieldBytes, isFile: head.isFile))
                return .partHeaders(head)
            }
            try parseHeaderLine(lineStart..<contentEnd, into: &block)
            lineStart = newline + 1
        }
    }

    private func indexOfLineFeed(from index: Int) -> Int? {
        guard index < buffer.endIndex else { return nil }
        let start = buffer.startIndex  // the closure captures locals only, not the parser
        return buffer.withUnsafeBytes { bytes -> Int? in
            let offset = index - start
            guard let found = memchr(bytes.baseAddress! + offset, 0x0A, bytes.count - offset) else { return nil }
            return start + bytes.baseAddress!.distance(to: UnsafeRawPointer(found))
        }
    }

    /// Where the line that ends with the LF at `newline` ends without its line break: before a CR, or (lenient
    /// mode) at a bare LF.
    private func lineContentEnd(lineStart: Int, newline: Int, quirks: inout Quirks) throws -> Int {
        if newline > lineStart, buffer[newline - 1] == 0x0D { return newline - 1 }
        guard mode == .lenient else {
            throw MultipartError(
                code: .invalidHeader, message: "a header line of part \(partCount - 1) ends in a bare LF; strict mode "
                    + "requires CRLF (use lenient mode)", offset: bodyOffset(newline), partIndex: partCount - 1)
        }
        quirks.insert(.lineFeedLineEndings)
        return newline
    }

    private func checkHeaderSize(_ size: Int) throws {
        guard size > limits.maxHeaderBytesPerPart else { return }
        throw MultipartError(
            code: .limitExceeded,
            message: "the headers of part \(partCount - 1) are larger than maxHeaderBytesPerPart "
                + "(\(limits.maxHeaderBytesPerPart) bytes)",
            offset: bufferOffset + Int64(limits.maxHeaderBytesPerPart), partIndex: partCount - 1)
    }

    /// Parses one whole header line, the buffer's bytes in `range` without the line break, into the block's fields.
    ///
    /// A continuation line (obsolete folding, RFC 5322 §3.2.2) joins the previous value with one space; blanks
    /// around each piece are trimmed, so a value whose first line is empty starts at the continuation's text.
    private func parseHeaderLine(_ range: Range<Int>, into block: inout HeaderBlock) throws {
        let line = buffer[range]  // taken here, not passed in: an argument sliced from the buffer copies the parser
        let offset = bodyOffset(line.startIndex)
        // NUL and other control bytes are kept (the conformance suite expects them in names; applications
        // decide); a bare CR is refused, since a CR-only line ending would hide a header from CRLF readers.
        let (colon, hasCR) = line.withUnsafeBytes { bytes -> (Int?, Bool) in
            guard let base = bytes.baseAddress else { return (nil, false) }
            if memchr(base, 0x0D, bytes.count) != nil { return (nil, true) }
            let found = memchr(base, Int32(UInt8(ascii: ":")), bytes.count)
            return (found.map { line.startIndex + base.distance(to: UnsafeRawPointer($0)) }, false)
        }
        if hasCR { throw headerError("a header line holds a bare CR", offset: offset) }
        if Self.isBlank(line[line.startIndex]) {
            guard !block.fields.isEmpty else {
                throw headerError("the first header line is a continuation", offset: offset)
            }
            block.quirks.insert(.headerFolding)
            let piece = Self.trimmed(line)
            if !piece.isEmpty {
                let last = block.fields.count - 1
                if !block.fields[last].value.isEmpty { block.fields[last].value += " " }
                block.fields[last].value += String(decoding: piece, as: UTF8.self)
            }
            return
        }
        guard let colon else {
            throw headerError("the header line \(Self.quoted(line)) has no ':'", offset: offset)
        }
        let name = line[..<colon]
        guard !name.isEmpty, name.allSatisfy(MultipartHeaders.isTokenCharacter) else {
            throw headerError("the header name \(Self.quoted(name)) is not an RFC 9110 token", offset: offset)
        }
        guard block.fields.count < limits.maxHeadersPerPart else {
            throw MultipartError(
                code: .limitExceeded,
                message: "part \(partCount - 1) has more than maxHeadersPerPart (\(limits.maxHeadersPerPart)) headers",
                offset: offset, partIndex: partCount - 1)
        }
        let value = String(decoding: Self.trimmed(line[(colon + 1)...]), as: UTF8.self)
        block.fields.append(MultipartHeaders.Field(name: Self.headerName(name), value: value))
    }

    /// The part's head from its complete header block: repeats resolved, `Content-Disposition` parsed and checked,
    /// the block's quirks recorded.
    private mutating func makeHead(_ block: inout HeaderBlock) throws -> MultipartPartHead {
        var quirks = block.quirks
        try resolveRepeats(in: &block.fields, quirks: &quirks)
        var fields: [MultipartHeaders.Field] = []
        swap(&fields, &block.fields)  // the block's array becomes the head's, uncopied
        let headers = MultipartHeaders(fields)
        let disposition = try checkedDisposition(headers, quirks: &quirks)
        self.quirks.formUnion(quirks)
        return MultipartPartHead(index: partCount - 1, headers: headers, disposition: disposition)
    }

    /// The part's `Content-Disposition: form-data` with a `name`, parsed.
    private func checkedDisposition(_ headers: MultipartHeaders, quirks: inout Quirks) throws -> ContentDisposition {
        guard let value = headers[.contentDisposition] else {
            throw MultipartError(
                code: .missingContentDisposition,
                message: "part \(partCount - 1) has no Content-Disposition header (RFC 7578 §4.2)",
                offset: bufferOffset, partIndex: partCount - 1)
        }
        var disposition: ContentDisposition
        do {
            disposition = try ContentDisposition(parsing: value, maxParameters: limits.maxParametersPerHeader)
        } catch var error as MultipartError {
            if error.code == .limitExceeded {
                error.message = "the Content-Disposition of part \(partCount - 1) has more than maxParametersPerHeader "
                    + "(\(limits.maxParametersPerHeader)) parameters"
            } else {
                error.message = "part \(partCount - 1): \(error.message)"
            }
            error.offset = bufferOffset
            error.partIndex = partCount - 1
            throw error
        }
        if disposition.type != "form-data" {
            guard mode == .lenient else {
                throw headerError(
                    "the Content-Disposition type is \(String(reflecting: disposition.type)), not form-data",
                    offset: bufferOffset)
            }
            quirks.insert(.otherDispositionType)
            disposition.type = "form-data"
        }
        guard disposition.name != nil else {
            throw MultipartError(
                code: .missingName, message: "the Content-Disposition of part \(partCount - 1) has no name (RFC 7578 §4.2)",
                offset: bufferOffset, partIndex: partCount - 1)
        }
        return disposition
    }

    /// `Content-Disposition` and `Content-Type` may appear once: strict mode refuses a repeat, lenient mode keeps
    /// the last of each. One pass, no allocation in the usual case.
    private func resolveRepeats(in fields: inout [MultipartHeaders.Field], quirks: inout Quirks) throws {
        var lastDisposition: Int?
        var lastType: Int?
        var repeated: MultipartHeaders.Name?
        for index in fields.indices {
            let name = fields[index].name
            if name == .contentDisposition {
                if lastDisposition != nil { repeated = .contentDisposition }
                lastDisposition = index
            } else if name == .contentType {
                if lastType != nil { repeated = .contentType }
                lastType = index
            }
        }
        guard let repeated else { return }
        guard mode == .lenient else {
            throw MultipartError(
                code: .duplicateHeader, message: "part \(partCount - 1) has more than one \(repeated) header",
                offset: bufferOffset, partIndex: partCount - 1)
        }
        quirks.insert(.duplicateHeaders)
        fields = fields.enumerated().filter { index, field in
            !(field.name == .contentDisposition && index != lastDisposition)
                && !(field.name == .contentType && index != lastType)
        }.map(\.element)
    }

    private func headerError(_ message: String, offset: Int64) -> MultipartError {
        MultipartError(
            code: .invalidHeader, message: "part \(partCount - 1): \(message)", offset: offset, partIndex: partCount - 1)
    }

    /// Browsers' spellings of the common names share one string; other names are copied.
    private static func headerName(_ bytes: ArraySlice<UInt8>) -> MultipartHeaders.Name {
        bytes.withUnsafeBytes { name in
            if Self.equal(name, "Content-Disposition") { return .contentDisposition }
            if Self.equal(name, "Content-Type") { return .contentType }
            return MultipartHeaders.Name(String(decoding: name, as: UTF8.self))
        }
    }

    private static func equal(_ bytes: UnsafeRawBufferPointer, _ text: StaticString) -> Bool {
        bytes.count == text.utf8CodeUnitCount && memcmp(bytes.baseAddress!, text.utf8Start, bytes.count) == 0
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var lower = bytes.startIndex
        var upper = bytes.endIndex
        while lower < upper, isBlank(bytes[lower]) { lower += 1 }
        while upper > lower, isBlank(bytes[upper - 1]) { upper -= 1 }
        return bytes[lower..<upper]
    }

    private static func quoted(_ bytes: ArraySlice<UInt8>) -> String {
        String(reflecting: String(decoding: bytes.prefix(80), as: UTF8.self))
    }
}
