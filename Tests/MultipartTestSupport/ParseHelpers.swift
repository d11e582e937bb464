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

/// Parses `body` fed as the given chunks, checking that events come in a valid order: once with the parser over
/// array slices, once with its engine over lent storage (what a `ByteBuffer` body takes), which must agree.
package func parse(
    _ body: [UInt8], boundary: String, mode: MultipartParser.Mode = .strict, limits: MultipartParser.Limits = .default,
    splitAt cuts: [Int]
) -> ParseOutcome {
    let parsedBoundary = try! MultipartBoundary(contentTypeBoundary: boundary)
    var parser = try! MultipartParser(boundary: parsedBoundary, limits: limits, mode: mode)
    let arrays = parse(body, cuts: cuts, parser: &parser, slice: { $0 }, quirks: { $0.quirks })
    var engine = MultipartParser.Engine<LentBytes>(boundary: parsedBoundary, limits: limits, mode: mode)
    let lent = parse(
        body, cuts: cuts, parser: &engine, slice: { LentBytes(copying: $0) }, quirks: { $0.quirks })
    #expect(lent == arrays, "the engine over lent storage differs from the parser over arrays")
    return arrays
}

/// The events of a parser or engine (`Parser`), fed `body` in the chunks `cuts` makes.
private func parse<Parser: ParserEngine>(
    _ body: [UInt8], cuts: [Int], parser: inout Parser, slice: (ArraySlice<UInt8>) -> Parser.Bytes,
    quirks: (Parser) -> MultipartParser.Quirks
) -> ParseOutcome {
    var parts: [ParsedPart] = []
    var inPart = false
    var ended = false
    do {
        var start = 0
        for end in cuts + [body.count] where end >= start {
            try parser.append(slice(body[start..<end]))
            start = end
            while let event = try parser.next() {
                switch event.shape {
                case .partHeaders(let head):
                    #expect(!inPart && !ended, "partHeaders inside a part or after end")
                    #expect(head.index == parts.count)
                    parts.append(ParsedPart(head: head, body: []))
                    inPart = true
                case .bodyBytes(let chunk):
                    let chunk = chunk.arraySlice
                    #expect(inPart, "bodyBytes outside a part")
                    #expect(!chunk.isEmpty, "an empty bodyBytes event")
                    parts[parts.count - 1].body += chunk
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
        return .parsed(parts, quirks(parser))
    } catch let error as MultipartError {
        return .failed(error.code, offset: error.offset, partsSoFar: parts, quirks: quirks(parser))
    } catch {
        Issue.record("unexpected error type: \(error)")
        return .failed(.invalidState, offset: nil)
    }
}

/// The parser over arrays and its engine over lent storage, as `parse` drives them.
private protocol ParserEngine {
    associatedtype Bytes
    associatedtype Event: CursorEvent
    mutating func append(_ bytes: Bytes) throws
    mutating func next() throws -> Event?
    mutating func finish() throws
}

extension MultipartParser: ParserEngine {
    fileprivate typealias Bytes = ArraySlice<UInt8>
}

extension MultipartParser.Engine<LentBytes>: ParserEngine {
    fileprivate typealias Bytes = LentBytes
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
