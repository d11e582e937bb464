package import StreamingMultipart
package import Testing

/// A part as the parser reported it.
package struct ParsedPart: Equatable {
    package var head: MultipartParser.PartHead
    package var body: [UInt8]
    package var name: String { head.name }
    package var text: String { String(decoding: body, as: UTF8.self) }
}

/// What parsing a whole body gave: the parts and quirks, or the error.
package enum ParseOutcome: Equatable {
    case parsed([ParsedPart], MultipartParser.Quirks)
    /// The error, and what was emitted before it (which must not depend on the chunking either).
    case failed(MultipartError.Code, offset: Int64?, partsSoFar: [ParsedPart] = [], quirks: MultipartParser.Quirks = [])

    package var parts: [ParsedPart]? {
        if case .parsed(let parts, _) = self { return parts }
        return nil
    }

    package var error: MultipartError.Code? {
        if case .failed(let code, _, _, _) = self { return code }
        return nil
    }

    /// The quirks the parser reported, whether it succeeded or failed.
    package var quirks: MultipartParser.Quirks {
        switch self {
        case .parsed(_, let quirks), .failed(_, _, _, let quirks): quirks
        }
    }
}

/// Parses `body` fed as the given chunks, checking that events come in a valid order.
package func parse(
    _ body: [UInt8], boundary: String, mode: MultipartParser.Mode = .strict, limits: MultipartParser.Limits = .default,
    splitAt cuts: [Int]
) -> ParseOutcome {
    var parser = try! MultipartParser(
        boundary: MultipartBoundary(contentTypeBoundary: boundary), limits: limits, mode: mode)
    var parts: [ParsedPart] = []
    var inPart = false
    var ended = false
    do {
        var start = 0
        for end in cuts + [body.count] where end >= start {
            try parser.append(body[start..<end])
            start = end
            while let event = try parser.next() {
                switch event {
                case .partHeaders(let head):
                    #expect(!inPart && !ended, "partHeaders inside a part or after end")
                    #expect(head.index == parts.count)
                    parts.append(ParsedPart(head: head, body: []))
                    inPart = true
                case .bodyBytes(let bytes):
                    #expect(inPart, "bodyBytes outside a part")
                    #expect(!bytes.isEmpty, "an empty bodyBytes event")
                    parts[parts.count - 1].body += bytes
                case .partEnd:
                    #expect(inPart, "partEnd outside a part")
                    inPart = false
                case .end:
                    #expect(!inPart && !ended, "end inside a part or twice")
                    ended = true
                }
            }
        }
        try parser.finish()
        #expect(ended, "finish() succeeded without an end event")
        return .parsed(parts, parser.quirks)
    } catch let error as MultipartError {
        return .failed(error.code, offset: error.offset, partsSoFar: parts, quirks: parser.quirks)
    } catch {
        Issue.record("unexpected error type: \(error)")
        return .failed(.invalidState, offset: nil)
    }
}

/// Parses `body` whole, one byte at a time, and split in two at every position; every chunking must give the
/// same outcome, which is returned.
package func parseEveryChunking(
    _ body: [UInt8], boundary: String, mode: MultipartParser.Mode = .strict, limits: MultipartParser.Limits = .default,
    sourceLocation: SourceLocation = #_sourceLocation
) -> ParseOutcome {
    let whole = parse(body, boundary: boundary, mode: mode, limits: limits, splitAt: [])
    let bytewise = parse(body, boundary: boundary, mode: mode, limits: limits, splitAt: Array(0..<body.count))
    #expect(bytewise == whole, "byte by byte differs from whole", sourceLocation: sourceLocation)
    for cut in 0...body.count {
        let split = parse(body, boundary: boundary, mode: mode, limits: limits, splitAt: [cut])
        if split != whole {
            Issue.record("split at \(cut) gives \(split), whole gives \(whole)", sourceLocation: sourceLocation)
            break
        }
    }
    return whole
}

extension MultipartBoundary {
    /// A boundary as a parser gets it from a Content-Type (up to 256 bytes, any printable characters).
    package init(contentTypeBoundary value: String) throws {
        try self.init(contentType: "multipart/form-data; boundary=\"\(value)\"")
    }
}

/// Bytes from a string with `\r\n` written out.
package func crlf(_ text: String) -> [UInt8] { Array(text.utf8) }
