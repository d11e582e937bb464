#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension MultipartParser {
    /// `.headers`: waits for a whole header block (lines up to an empty line), then parses it.
    ///
    /// Lines are checked as they complete, so a body of endless headers stops at the first limit it reaches.
    ///
    /// - Parameters:
    ///   - scanned: how many bytes at the buffer's start are already known to be whole, non-empty lines, so that
    ///     input arriving a byte at a time is scanned once, not once per byte.
    ///   - fields: how many of those lines start a header.
    mutating func readHeaders(scannedTo scanned: Int, fields: Int) throws -> MultipartPartHead? {
        let start = buffer.startIndex
        var lineStart = start + scanned
        var fields = fields
        while true {
            guard let newline = indexOfLineFeed(from: lineStart) else {
                try checkHeaderSize(buffer.endIndex - start)
                state = .headers(scanned: lineStart - start, fields: fields)
                return nil
            }
            try checkHeaderSize(newline + 1 - start)
            let contentEnd = try lineContentEnd(lineStart: lineStart, newline: newline)
            if contentEnd == lineStart {
                let head = try parseHeaderBlock(buffer[start..<lineStart])
                consume(newline + 1 - start)
                state = .body
                return head
            }
            // Fail on a line that cannot be a header as soon as it is whole, not when the block ends: a part
            // whose empty line is missing is reported as a bad header, not as a truncated body.
            let line = buffer[lineStart..<contentEnd]
            if line.first != UInt8(ascii: " "), line.first != UInt8(ascii: "\t") {
                guard line.contains(UInt8(ascii: ":")) else {
                    throw headerError("the header line \(Self.quoted(line)) has no ':'", offset: bodyOffset(lineStart))
                }
                fields += 1
                try checkHeaderCount(fields, offset: bodyOffset(lineStart))
            }
            lineStart = newline + 1
        }
    }

    private func indexOfLineFeed(from index: Int) -> Int? {
        guard index < buffer.endIndex else { return nil }
        return buffer.withUnsafeBytes { bytes -> Int? in
            let offset = index - buffer.startIndex
            guard let found = memchr(bytes.baseAddress! + offset, 0x0A, bytes.count - offset) else { return nil }
            return buffer.startIndex + bytes.baseAddress!.distance(to: UnsafeRawPointer(found))
        }
    }

    /// Where the line that ends with the LF at `newline` ends without its line break: before a CR, or (lenient
    /// mode) at a bare LF.
    private mutating func lineContentEnd(lineStart: Int, newline: Int) throws -> Int {
        if newline > lineStart, buffer[newline - 1] == 0x0D { return newline - 1 }
        guard mode == .lenient else {
            throw MultipartError(
                code: .invalidHeader, message: "a header line of part \(partCount - 1) ends in a bare LF; strict mode "
                    + "requires CRLF (use lenient mode)", offset: bodyOffset(newline), partIndex: partCount - 1)
        }
        quirks.insert(.lineFeedLineEndings)
        return newline
    }

    private func checkHeaderCount(_ count: Int, offset: Int64) throws {
        guard count > limits.maxHeadersPerPart else { return }
        throw MultipartError(
            code: .limitExceeded,
            message: "part \(partCount - 1) has more than maxHeadersPerPart (\(limits.maxHeadersPerPart)) headers",
            offset: offset, partIndex: partCount - 1)
    }

    private func checkHeaderSize(_ size: Int) throws {
        guard size > limits.maxHeaderBytesPerPart else { return }
        throw MultipartError(
            code: .limitExceeded,
            message: "the headers of part \(partCount - 1) are larger than maxHeaderBytesPerPart "
                + "(\(limits.maxHeaderBytesPerPart) bytes)",
            offset: bufferOffset + Int64(limits.maxHeaderBytesPerPart), partIndex: partCount - 1)
    }

    /// Parses the lines of a header block (without its final empty line) and checks `Content-Disposition`.
    private mutating func parseHeaderBlock(_ block: ArraySlice<UInt8>) throws -> MultipartPartHead {
        var fields: [MultipartHeaders.Field] = []
        var lineStart = block.startIndex
        while lineStart < block.endIndex {
            let newline = block[lineStart...].firstIndex(of: 0x0A)!
            let contentEnd = newline > lineStart && block[newline - 1] == 0x0D ? newline - 1 : newline
            try parseHeaderLine(block[lineStart..<contentEnd], into: &fields)
            lineStart = newline + 1
        }
        var headers = MultipartHeaders(fields)
        let disposition = try checkedDisposition(&headers)
        try checkSingle(.contentType, in: &headers)
        let head = MultipartPartHead(index: partCount - 1, headers: headers, disposition: disposition)
        partIsFile = head.isFile
        return head
    }

    private mutating func parseHeaderLine(_ line: ArraySlice<UInt8>, into fields: inout [MultipartHeaders.Field]) throws {
        let offset = bodyOffset(line.startIndex)
        // NUL and other control bytes are kept (the conformance suite expects them in names; applications
        // decide); a bare CR is refused, since a CR-only line ending would hide a header from CRLF readers.
        if line.contains(0x0D) { throw headerError("a header line holds a bare CR", offset: offset) }
        if line.first == UInt8(ascii: " ") || line.first == UInt8(ascii: "\t") {
            guard !fields.isEmpty else { throw headerError("the first header line is a continuation", offset: offset) }
            quirks.insert(.headerFolding)
            fields[fields.count - 1].value += " " + String(decoding: Self.trimmed(line), as: UTF8.self)
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            throw headerError("the header line \(Self.quoted(line)) has no ':'", offset: offset)
        }
        let name = line[..<colon]
        guard !name.isEmpty, name.allSatisfy(MultipartHeaders.isTokenCharacter) else {
            throw headerError("the header name \(Self.quoted(name)) is not an RFC 9110 token", offset: offset)
        }
        let value = String(decoding: Self.trimmed(line[(colon + 1)...]), as: UTF8.self)
        fields.append(MultipartHeaders.Field(name: Self.headerName(name), value: value))
    }

    /// The part's single `Content-Disposition: form-data` with a `name`, parsed.
    private mutating func checkedDisposition(_ headers: inout MultipartHeaders) throws -> ContentDisposition {
        try checkSingle(.contentDisposition, in: &headers)
        guard let value = headers[.contentDisposition] else {
            throw MultipartError(
                code: .missingContentDisposition,
                message: "part \(partCount - 1) has no Content-Disposition header (RFC 7578 §4.2)",
                offset: bufferOffset, partIndex: partCount - 1)
        }
        var disposition: ContentDisposition
        do {
            disposition = try ContentDisposition(parsing: value)
        } catch var error as MultipartError {
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
        }
        guard disposition.name != nil else {
            throw MultipartError(
                code: .missingName, message: "the Content-Disposition of part \(partCount - 1) has no name (RFC 7578 §4.2)",
                offset: bufferOffset, partIndex: partCount - 1)
        }
        disposition.type = "form-data"
        return disposition
    }

    /// Strict mode refuses a second `name` header; lenient mode keeps the last one.
    private mutating func checkSingle(_ name: MultipartHeaders.Name, in headers: inout MultipartHeaders) throws {
        let values = headers.values(for: name)
        guard values.count > 1 else { return }
        guard mode == .lenient else {
            throw MultipartError(
                code: .duplicateHeader, message: "part \(partCount - 1) has \(values.count) \(name) headers",
                offset: bufferOffset, partIndex: partCount - 1)
        }
        quirks.insert(.duplicateHeaders)
        headers[name] = values.last
    }

    private func headerError(_ message: String, offset: Int64) -> MultipartError {
        MultipartError(
            code: .invalidHeader, message: "part \(partCount - 1): \(message)", offset: offset, partIndex: partCount - 1)
    }

    /// Browsers' spellings of the common names share one string; other names are copied.
    private static func headerName(_ bytes: ArraySlice<UInt8>) -> MultipartHeaders.Name {
        if bytes.elementsEqual(contentDispositionBytes) { return .contentDisposition }
        if bytes.elementsEqual(contentTypeBytes) { return .contentType }
        return MultipartHeaders.Name(String(decoding: bytes, as: UTF8.self))
    }

    private static let contentDispositionBytes = Array("Content-Disposition".utf8)
    private static let contentTypeBytes = Array("Content-Type".utf8)

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var bytes = bytes
        while let first = bytes.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { bytes.removeFirst() }
        while let last = bytes.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { bytes.removeLast() }
        return bytes
    }

    private static func quoted(_ bytes: ArraySlice<UInt8>) -> String {
        String(reflecting: String(decoding: bytes.prefix(80), as: UTF8.self))
    }
}
