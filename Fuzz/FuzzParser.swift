// libFuzzer entry point over the parser, the header tokenizers and the builder. Built by Fuzz/run.sh, not by
// SwiftPM.

import Foundation

//
// Input: a first line that is the Content-Type value (fuzzing MultipartBoundary(contentType:) and the parameter
// tokenizer), then a byte that picks the mode and the chunk size, then the body.
// Checks, beyond "no crash, no hang, no leak": events come in a valid order, body bytes never exceed the input,
// the same body parsed whole and in small chunks gives the same outcome (parts, error and quirks), what the
// parser holds stays within a chunk, a header block and a delimiter, and every property of a received head (decoded
// on demand from its bytes) agrees with the headers and a disposition parsed again from them. In compressed mode
// (control bit 0x10) the body is gzipped or deflated (bit 0x20) and must parse to the same outcome through the
// zlib stage, and the raw input, read as compressed data, must fail cleanly. The builder: every body the strict
// parser accepts is built again under its own boundary (one the caller chose, so file and stream parts are
// scanned for it), each part once from memory and once as a stream; the builder refuses the memory part exactly
// when reading the stream part fails on the boundary, and what it builds parses back to the same parts.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let newline = input.firstIndex(of: 0x0A) ?? input.endIndex
    let contentType = String(decoding: input[..<newline], as: UTF8.self)
    _ = try? ContentDisposition(parsing: contentType)
    if let disposition = try? ContentDisposition(parsing: contentType) {
        // What a disposition writes reads back as the same fields.
        let again = try? ContentDisposition(parsing: disposition.headerValue, maxParameters: 1000)
        precondition(
            again?.name == disposition.name && again?.filename == disposition.filename, "round trip of \(disposition)")
    }
    _ = try? ContentType(parsing: contentType)
    guard let boundary = try? MultipartBoundary(contentType: contentType), newline + 1 < input.count else { return 0 }
    let control = input[newline + 1]
    let body = Array(input[(newline + 2)...])
    let mode: MultipartParser.Mode = control & 1 == 0 ? .strict : .lenient
    let chunkSize = [1, 2, 3, 7, 16, 64, 1000, 1 << 20][Int(control >> 1) & 7]
    var limits = MultipartParser.Limits.default
    limits.maxHeaderBytesPerPart = 512
    limits.maxParts = 64
    limits.maxFieldBytes = 4096
    let whole = outcome(body, boundary, mode, limits, chunkSize: body.count + 1)
    let chunked = outcome(body, boundary, mode, limits, chunkSize: chunkSize)
    precondition(whole == chunked, "whole and chunked parses differ: \(whole) vs \(chunked)")
    let lent = lentOutcome(body, boundary, mode, limits, chunkSize: chunkSize)
    precondition(lent == chunked, "the engine over lent storage differs: \(lent) vs \(chunked)")
    if mode == .strict, whole.error == nil, let parts = collectParts(body, boundary) {
        checkBuilderRoundTrip(parts, boundary: boundary, readSize: chunkSize)
    }
    if control & 0x10 != 0 {
        // Compressed mode: the body gzipped or deflated, parsed through the zlib stage, gives the same outcome;
        // and the raw input read as compressed data never crashes or hangs.
        let encoding: ContentEncoding = control & 0x20 == 0 ? .gzip : .deflate
        let compressed = deflated(body, format: encoding == .gzip ? .gzip : .zlib)
        let inflated = outcome(compressed, boundary, mode, limits, chunkSize: chunkSize, encoding: encoding)
        precondition(inflated == whole, "compressed and plain parses differ: \(inflated) vs \(whole)")
        _ = outcome(body, boundary, mode, limits, chunkSize: chunkSize, encoding: encoding)
    }
    return 0
}

/// `bytes` compressed whole with the library's compressor.
func deflated(_ bytes: [UInt8], format: CompressionFormat) -> [UInt8] {
    var compressor = try! ZlibCompressor(format: format, level: 6)
    let input = bytes[...]
    var output: [UInt8] = []
    let step = try! output.append(capacity: bytes.count + 1024) {
        try compressor.compress(input.span, into: &$0, finishing: true)
    }
    precondition(step.isFinished && step.consumed == bytes.count, "compressing \(bytes.count) bytes did not finish")
    return output
}

/// What one parse found: per part its index, name and filename lengths and body size; whether `.end` came; the
/// error code, if any.
struct Outcome: Equatable {
    var parts: [[Int]] = []
    var ended = false
    var error: String?
    var quirks: UInt16 = 0
}

func outcome(
    _ body: [UInt8], _ boundary: MultipartBoundary, _ mode: MultipartParser.Mode, _ limits: MultipartParser.Limits,
    chunkSize: Int, encoding: ContentEncoding = .identity
) -> Outcome {
    var parser = DecompressingMultipartParser(
        parser: try! MultipartParser(boundary: boundary, limits: limits, mode: mode), encoding: encoding)
    var result = Outcome()
    var inPart = false
    var total = 0
    do {
        var offset = 0
        repeat {
            let end = min(offset + chunkSize, body.count)
            try parser.append(body[offset..<end])
            offset = end
            while let event = try parser.next() {
                switch event {
                case .partHeaders(let head):
                    precondition(!inPart && !result.ended, "partHeaders inside a part or after the end")
                    inPart = true
                    result.parts.append([head.index, head.name.utf8.count, head.filename?.utf8.count ?? -1, 0])
                    checkConsistent(head, mode: mode)
                case .bodyBytes(let bytes):
                    precondition(inPart && !bytes.isEmpty, "bodyBytes outside a part, or empty")
                    total += bytes.count
                    result.parts[result.parts.count - 1][3] += bytes.count
                case .partEnd:
                    precondition(inPart, "partEnd outside a part")
                    inPart = false
                case .end:
                    precondition(!inPart && !result.ended, "end inside a part or twice")
                    result.ended = true
                }
            }
            // A compressed body reaches the parser a 64 KiB block at a time.
            let chunk = encoding == .identity ? min(chunkSize, body.count) : 65536
            let bound = chunk + limits.maxHeaderBytesPerPart + boundary.value.utf8.count + 256
            precondition(parser.parser.bufferedByteCount <= bound, "holds \(parser.parser.bufferedByteCount) bytes")
        } while offset < body.count
        try parser.finish()
    } catch let error as MultipartError {
        result.error = error.code.name
    } catch {
        preconditionFailure("unexpected error \(error)")
    }
    precondition(encoding != .identity || total <= body.count, "more body bytes than input")
    result.quirks = parser.parser.quirks.rawValue
    return result
}

/// What the engine over lent storage (a `ByteBuffer` body's) finds in `body` fed in chunks of `chunkSize`, each lent
/// from storage of its own, as ``outcome(_:_:_:_:chunkSize:encoding:)`` says it for the parser over arrays.
func lentOutcome(
    _ body: [UInt8], _ boundary: MultipartBoundary, _ mode: MultipartParser.Mode, _ limits: MultipartParser.Limits,
    chunkSize: Int
) -> Outcome {
    var engine = MultipartParser.Engine<LentBytes>(boundary: boundary, limits: limits, mode: mode)
    var result = Outcome()
    do {
        var offset = 0
        repeat {
            let end = min(offset + chunkSize, body.count)
            try engine.append(LentBytes(copying: body[offset..<end]))
            offset = end
            while let event = try engine.next() {
                switch event {
                case .partHeaders(let head):
                    result.parts.append([head.index, head.name.utf8.count, head.filename?.utf8.count ?? -1, 0])
                case .bodyBytes(let bytes):
                    precondition(!bytes.isEmpty, "an empty bodyBytes event")
                    result.parts[result.parts.count - 1][3] += bytes.count
                case .partEnd: break
                case .end: result.ended = true
                }
            }
            let bound = min(chunkSize, body.count) + limits.maxHeaderBytesPerPart + boundary.value.utf8.count + 256
            precondition(engine.bufferedByteCount <= bound, "lent: holds \(engine.bufferedByteCount) bytes")
        } while offset < body.count
        try engine.finish()
    } catch let error as MultipartError {
        result.error = error.code.name
    } catch {
        preconditionFailure("unexpected error \(error)")
    }
    result.quirks = engine.quirks.rawValue
    return result
}

/// A received head's properties agree with each other and with a head made from its decoded fields.
func checkConsistent(_ head: MultipartParser.PartHead, mode: MultipartParser.Mode) {
    let disposition = head.disposition
    precondition(head.name == disposition.name ?? "" && head.filename == disposition.filename, "name of \(head)")
    precondition(head.filenameStar == disposition.filenameStar, "filename* of \(head)")
    precondition(head.isFile == (disposition.filename != nil || disposition.filenameStar != nil), "isFile of \(head)")
    precondition(head.contentType == head.headers[.contentType], "content type of \(head)")
    let value = head.headers[.contentDisposition]!
    var reparsed = try! ContentDisposition(parsing: value, maxParameters: 1000)
    if mode == .lenient { reparsed.type = "form-data" }
    precondition(reparsed == disposition, "disposition of \(head) differs from \(value) parsed again")
    let made = MultipartParser.PartHead(index: head.index, headers: head.headers, disposition: disposition)
    precondition(made == head && made.hashValue == head.hashValue, "\(head) differs from its fields")
}

/// A part as the parser read it: its head's name, filename and content type, and its bytes.
struct ReadPart {
    var name: String
    var filename: String?
    var contentType: String?
    var bytes: [UInt8]
}

/// The parts of a body the strict parser accepts, or nil.
func collectParts(_ body: [UInt8], _ boundary: MultipartBoundary) -> [ReadPart]? {
    guard var parser = try? MultipartParser(boundary: boundary) else { return nil }
    var parts: [ReadPart] = []
    do {
        try parser.append(body)
        while let event = try parser.next() {
            switch event {
            case .partHeaders(let head):
                parts.append(
                    ReadPart(name: head.name, filename: head.filename, contentType: head.contentType, bytes: []))
            case .bodyBytes(let bytes): parts[parts.count - 1].bytes += bytes
            case .partEnd, .end: break
            }
        }
        try parser.finish()
    } catch {
        return nil
    }
    return parts
}

/// Builds `parts` again under `boundary`, from memory and as streams, and checks what comes out (see the top).
func checkBuilderRoundTrip(_ parts: [ReadPart], boundary: MultipartBoundary, readSize: Int) {
    var body = MultipartBody(boundary: boundary)
    var expected: [ReadPart] = []
    for part in parts {
        let data = Data(part.bytes)
        let inMemory = MultipartPart.data(data, name: part.name, filename: part.filename, contentType: part.contentType)
        let streamed = MultipartPart.stream(
            name: part.name, filename: part.filename, contentType: part.contentType, length: data.count
        ) { InputStream(data: data) }
        var alone = MultipartBody(boundary: boundary)
        guard (try? alone.append(streamed)) != nil else { continue }  // a header the builder refuses, both ways
        var reader = alone.makeReader()
        let streamReads = (try? readAll(&reader, size: readSize)) != nil
        let memoryAppends = (try? body.append(inMemory)) != nil
        precondition(
            memoryAppends == streamReads, "memory part appended: \(memoryAppends), stream read: \(streamReads)")
        guard memoryAppends else { continue }
        precondition((try? body.append(streamed)) != nil, "a stream part refused where its memory twin was not")
        let name = ContentDisposition.decodeBrowserEscapes(ContentDisposition.escape(part.name))
        let filename = part.filename.map { ContentDisposition.decodeBrowserEscapes(ContentDisposition.escape($0)) }
        let read = ReadPart(name: name, filename: filename, contentType: part.contentType, bytes: part.bytes)
        expected += [read, read]
    }
    var reader = body.makeReader()
    guard let built = try? readAll(&reader, size: readSize) else {
        preconditionFailure("a body of parts the builder accepted failed to read")
    }
    guard let again = collectParts(built, boundary) else {
        preconditionFailure(
            "the builder's body does not parse: \(String(decoding: built, as: UTF8.self).debugDescription)")
    }
    precondition(
        again.map(\.name) == expected.map(\.name) && again.map(\.filename) == expected.map(\.filename)
            && again.map(\.bytes) == expected.map(\.bytes),
        "the builder's body reads back otherwise")
}

/// A reader's whole output, in reads of `size` bytes.
func readAll(_ reader: inout BodyReader, size: Int) throws -> [UInt8] {
    var result: [UInt8] = []
    while try result.append(capacity: max(1, min(size, 1 << 16)), { try reader.read(into: &$0) }) > 0 {}
    return result
}
