import MultipartTestSupport
import StreamingMultipart
import Testing

/// The parser on hand-written bodies. Every body is parsed whole, one byte at a time and split at every position
/// (`parseEveryChunking`), and all must agree.
@Suite struct MultipartParserTests {
    let simple = crlf(
        "--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nalpha\r\n"
            + "--xyz\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f.txt\"\r\nContent-Type: text/plain\r\n\r\n"
            + "line1\r\nline2\r\n--xyz--\r\n")

    @Test func parsesFieldsAndFiles() throws {
        let parts = try #require(parseEveryChunking(simple, boundary: "xyz").parts)
        #expect(parts.map(\.name) == ["a", "f"])
        #expect(parts.map(\.text) == ["alpha", "line1\r\nline2"])
        #expect(parts[1].head.filename == "f.txt")
        #expect(parts[1].head.contentType == "text/plain")
        #expect(parts[1].head.isFile && !parts[0].head.isFile)
        #expect(parts[0].head.headers.map(\.name.rawName) == ["Content-Disposition"])
    }

    @Test func commonBodiesReportNoQuirks() {
        #expect(
            parseEveryChunking(simple, boundary: "xyz")
                == .parsed(parseEveryChunking(simple, boundary: "xyz").parts!, []))
    }

    @Test func emptyFormAndEmptyParts() throws {
        #expect(parseEveryChunking(crlf("--xyz--\r\n"), boundary: "xyz").parts == [])
        let parts = try #require(
            parseEveryChunking(
                crlf("--xyz\r\nContent-Disposition: form-data; name=\"e\"\r\n\r\n\r\n--xyz--\r\n"), boundary: "xyz"
            ).parts)
        #expect(parts.count == 1 && parts[0].body.isEmpty)
    }

    @Test func preambleEpilogueAndPaddingAreSkipped() throws {
        let body = crlf(
            "preamble text\r\n--xyz \t\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n--xyz--  \r\nepilogue\r\n--xyz\r\n"
        )
        guard case .parsed(let parts, let quirks) = parseEveryChunking(body, boundary: "xyz") else {
            Issue.record("did not parse")
            return
        }
        #expect(parts.map(\.text) == ["v"])
        #expect(quirks == [.preamble])
    }

    @Test func leadingLineBreakAndMissingFinalLineBreakAreQuirksInBothModes() {
        let body = crlf("\r\n--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n--xyz--")
        for mode in [MultipartParser.Mode.strict, .lenient] {
            guard case .parsed(let parts, let quirks) = parseEveryChunking(body, boundary: "xyz", mode: mode) else {
                Issue.record("did not parse in \(mode)")
                continue
            }
            #expect(parts.map(\.text) == ["v"])
            #expect(quirks == [.leadingLineBreak, .missingFinalLineBreak])
        }
    }

    @Test func lineFeedOnlyBodiesNeedLenientMode() throws {
        let body = crlf(
            "--xyz\nContent-Disposition: form-data; name=\"a\"\n\nline\r\nmore\n--xyz\nContent-Disposition: form-data; name=\"b\"\n\nb\n--xyz--\n"
        )
        #expect(parseEveryChunking(body, boundary: "xyz", mode: .strict).error == .invalidDelimiter)
        guard case .parsed(let parts, let quirks) = parseEveryChunking(body, boundary: "xyz", mode: .lenient) else {
            Issue.record("lenient mode did not parse")
            return
        }
        #expect(parts.map(\.text) == ["line\r\nmore", "b"])
        #expect(quirks == [.lineFeedLineEndings])
    }

    @Test func lenientModeKeepsACRLFDelimiterWhole() throws {
        // In lenient mode the CR before "\n--xyz" belongs to the delimiter, not to the body.
        let parts = try #require(parseEveryChunking(simple, boundary: "xyz", mode: .lenient).parts)
        #expect(parts.map(\.text) == ["alpha", "line1\r\nline2"])
    }

    @Test(arguments: [MultipartParser.Mode.strict, .lenient])
    func boundaryLookalikesAreData(mode: MultipartParser.Mode) throws {
        let content = "a --xyz in the middle of a line\r\nx--xyz\r\n--xy\r\n-\r\n--\r\n\r\r\n--x\r--xyzz\n--xyz-"
        let body = crlf("--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n\(content)\r\n--xyz--\r\n")
        let parts = try #require(parseEveryChunking(body, boundary: "xyz", mode: mode).parts)
        #expect(parts.map(\.text) == [content])
    }

    @Test func aLineThatBeginsWithTheBoundaryIsRefusedInStrictModeAndDataInLenientMode() throws {
        // RFC 2046 §5.1.1: the boundary may not begin a line inside a part; lenient mode reads such a line as data,
        // as Go, Werkzeug and python-multipart do.
        let head = "--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n"
        let content = "one\r\n--xyzz is longer\r\ntwo"
        let body = crlf(head + content + "\r\n--xyz--\r\n")
        guard case .failed(let code, let offset, _, _) = parseEveryChunking(body, boundary: "xyz") else {
            Issue.record("strict mode read a line that begins with the boundary")
            return
        }
        #expect(code == .invalidDelimiter)
        #expect(offset == Int64(head.utf8.count + 3))  // the CRLF before "--xyzz"
        let parts = try #require(parseEveryChunking(body, boundary: "xyz", mode: .lenient).parts)
        #expect(parts.map(\.text) == [content])
    }

    @Test func headersKeepOrderFoldAndCompareInAnyCase() throws {
        let body = crlf(
            "--xyz\r\ncontent-disposition: form-data; NAME=\"a\"\r\nX-Long: one\r\n two\r\nX-Other:  v  \r\n\r\nx\r\n--xyz--\r\n"
        )
        guard case .parsed(let parts, let quirks) = parseEveryChunking(body, boundary: "xyz") else {
            Issue.record("did not parse")
            return
        }
        #expect(parts[0].name == "a")
        #expect(parts[0].head.headers.map(\.name.rawName) == ["content-disposition", "X-Long", "X-Other"])
        #expect(parts[0].head.headers["x-long"] == "one two")
        #expect(parts[0].head.headers["X-OTHER"] == "v")
        #expect(quirks == [.headerFolding])
    }

    /// A header line with a bare CR is refused once the byte after the CR arrives, not when the line ends (here it
    /// never does), at the line's offset for every chunking; a CR that ends the input waits for that byte.
    @Test(arguments: [MultipartParser.Mode.strict, .lenient])
    func aBareCRInAHeaderIsRefusedAtTheByteAfterIt(_ mode: MultipartParser.Mode) {
        let head = "--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n"
        let outcome = parseEveryChunking(crlf(head + "X-A: one\rtwo"), boundary: "xyz", mode: mode)
        guard case .failed(let code, let offset, _, _) = outcome else {
            Issue.record("a bare CR was taken: \(outcome)")
            return
        }
        #expect(code == .invalidHeader && offset == Int64(head.utf8.count))
        #expect(parseEveryChunking(crlf(head + "X-A: one\r"), boundary: "xyz", mode: mode).error == .truncated)
    }

    /// Lenient mode keeps the last of a repeated `Content-Type`: the first one's continuation lines go with it, and
    /// a later field's are joined to its value.
    @Test func aDroppedHeaderTakesItsContinuationLinesWithIt() throws {
        let body = crlf(
            "--xyz\r\nContent-Type: a/b\r\n  more\r\nContent-Disposition: form-data; name=\"a\"\r\n"
                + "Content-Type: c/d\r\nX-Long: one\r\n two\r\n\r\nx\r\n--xyz--\r\n")
        let head = try #require(parseEveryChunking(body, boundary: "xyz", mode: .lenient).parts?.first?.head)
        #expect(head.contentType == "c/d")
        #expect(head.headers.map(\.name.rawName) == ["Content-Disposition", "Content-Type", "X-Long"])
        #expect(head.headers["x-long"] == "one two")
    }

    @Test func contentDispositionIsTokenizedAndDecoded() throws {
        let disposition = #"form-data; filename="a;b=\"c\".txt"; name="we%22ird%0D%0A"; filename*=UTF-8''%E2%9C%93.txt"#
        let body = crlf("--xyz\r\nContent-Disposition: \(disposition)\r\n\r\nx\r\n--xyz--\r\n")
        let head = try #require(parseEveryChunking(body, boundary: "xyz").parts?.first?.head)
        #expect(head.name == "we\"ird\r\n")
        #expect(head.filename == "a;b=\"c\".txt")
        #expect(head.filenameStar == "✓.txt")
    }

    @Test(arguments: [
        ("--xyz\r\nContent-Type: text/plain\r\n\r\nx\r\n--xyz--\r\n", MultipartError.Code.missingContentDisposition),
        ("--xyz\r\nContent-Disposition: form-data; filename=\"f\"\r\n\r\nx\r\n--xyz--\r\n", .missingName),
        ("--xyz\r\nContent-Disposition: form-data; name=\"a\"; name=\"b\"\r\n\r\nx\r\n--xyz--\r\n", .invalidHeader),
        ("--xyz\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\nx\r\n--xyz--\r\n", .invalidHeader),
        ("--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\nBad Name: v\r\n\r\nx\r\n--xyz--\r\n", .invalidHeader),
        ("--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\nno colon here\r\n", .invalidHeader),
        ("--xyz\r\nContent-Disposition: form-data; name=\"a\r\n\r\nx\r\n--xyz--\r\n", .invalidHeader),
        (
            "--xyz\r\nContent-Disposition: form-data; name=\"a\"; filename*=UTF-8''%E2%9\r\n\r\nx\r\n--xyz--\r\n",
            .invalidHeader
        ),
        (
            "--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\nContent-Type: a/b\r\nContent-Type: c/d\r\n\r\nx\r\n--xyz--\r\n",
            .duplicateHeader
        ),
        ("--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--xyz--garbage", .invalidDelimiter),
        ("--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\ncut off", .truncated),
        ("--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--xyz\r\n", .missingCloseDelimiter),
        ("--xyz\r\nContent-Disposition: form-da", .truncated),
        ("no boundary anywhere\r\n--xy\r\n", .boundaryNotFound),
        ("", .boundaryNotFound),
        ("--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--xyz-", .truncated),
    ])
    func malformedBodiesGetTheirError(_ body: String, _ code: MultipartError.Code) {
        #expect(parseEveryChunking(crlf(body), boundary: "xyz").error == code, "\(body.debugDescription)")
    }

    @Test func lenientModeAcceptsWhatStrictRefuses() {
        let bodies = [
            "--xyz\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\nx\r\n--xyz--\r\n",
            "--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--xyz--garbage",
            "--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\nContent-Type: a/b\r\nContent-Type: c/d\r\n\r\nx\r\n--xyz--\r\n",
        ]
        let quirks: [MultipartParser.Quirks] = [.otherDispositionType, .textAfterCloseDelimiter, .duplicateHeaders]
        for (body, quirk) in zip(bodies, quirks) {
            #expect(parseEveryChunking(crlf(body), boundary: "xyz").error != nil)
            guard case .parsed(let parts, let found) = parseEveryChunking(crlf(body), boundary: "xyz", mode: .lenient)
            else {
                Issue.record("lenient mode refused \(body.debugDescription)")
                continue
            }
            #expect(parts.map(\.text) == ["x"])
            #expect(found == quirk)
        }
    }

    @Test func errorsCarryTheByteOffset() {
        // The bad header line starts at byte 49.
        let body = crlf("--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\nno colon\r\n\r\nx\r\n--xyz--\r\n")
        #expect(parse(body, boundary: "xyz", splitAt: []) == .failed(.invalidHeader, offset: 49))
    }

    @Test func afterAnErrorEveryCallThrowsIt() throws {
        var parser = try MultipartParser(boundary: MultipartBoundary("xyz"))
        try parser.append(crlf("--xyz\r\nbad line\r\n"))
        let first = #expect(throws: MultipartError.self) { try parser.next() }
        let again = #expect(throws: MultipartError.self) { try parser.next() }
        let append = #expect(throws: MultipartError.self) { try parser.append([1, 2, 3]) }
        #expect(first?.message == again?.message && again?.message == append?.message)
    }

    @Test func bodyBytesAreSlicesOfTheAppendedChunk() throws {
        var parser = try MultipartParser(boundary: MultipartBoundary("xyz"))
        let chunk =
            crlf("--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n") + [UInt8](repeating: 7, count: 100_000)
        try parser.append(chunk)
        _ = try parser.next()  // headers
        guard case .bodyBytes(let bytes) = try parser.next() else {
            Issue.record("expected body bytes")
            return
        }
        #expect(bytes.count == 100_000)
        // Same storage: the slice's first element is the chunk's byte at the same index.
        chunk.withUnsafeBufferPointer { whole in
            bytes.withUnsafeBufferPointer { slice in #expect(slice.baseAddress == whole.baseAddress! + bytes.startIndex)
            }
        }
    }

    /// A chunk that arrives while the parser holds a tail (a possible delimiter's start, a header block cut short)
    /// is read in place: the bytes that join it to the tail are copied, the rest comes out as slices of the chunk.
    @Test(arguments: [
        "tail\r\n--xy",  // a possible delimiter the next chunk decides: data
        "tail\r\n--xyz\r\nContent-Disposition: form-da",  // a delimiter, then a header block cut short
    ])
    func aChunkAfterAHeldTailIsReadInPlace(_ firstChunkEnd: String) throws {
        var parser = try MultipartParser(boundary: MultipartBoundary("xyz"))
        try parser.append(crlf("--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n" + firstChunkEnd))
        var emitted: [UInt8] = []
        while let event = try parser.next() { if case .bodyBytes(let bytes) = event { emitted += bytes } }
        #expect(emitted == Array("tail".utf8))
        let second = crlf("ta; name=\"b\"\r\n\r\n") + [UInt8](repeating: 7, count: 100_000) + crlf("\r\n--xyz--\r\n")
        try parser.append(second)
        var inPlace = 0
        var copied = 0
        while let event = try parser.next() {
            guard case .bodyBytes(let bytes) = event else { continue }
            emitted += bytes
            let shared = second.withUnsafeBufferPointer { whole in
                bytes.withUnsafeBufferPointer { $0.baseAddress == whole.baseAddress! + bytes.startIndex }
            }
            if shared { inPlace += bytes.count } else { copied += bytes.count }
        }
        try parser.finish()
        let closing = crlf("\r\n--xyz--\r\n").count
        let expected =
            firstChunkEnd.hasSuffix("da")
            ? Array("tail".utf8) + [UInt8](repeating: 7, count: 100_000)
            : crlf(firstChunkEnd) + second.dropLast(closing)
        #expect(emitted == expected)
        #expect(inPlace >= 100_000 - 200 && copied <= 200, "in place \(inPlace), copied \(copied)")
    }

    /// A preamble longer than what joins a held tail to the next chunk, with near misses of the boundary in it, so
    /// that a split leaves a tail in the preamble and the delimiter lies past the bytes copied to decide it.
    @Test func aLongPreambleParsesAtEverySplit() throws {
        let preamble = String(repeating: "preamble --xy line\r\n", count: 20)
        let body = crlf(preamble + "--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n--xyz--\r\n")
        let parts = try #require(parseEveryChunking(body, boundary: "xyz", mode: .lenient).parts)
        #expect(parts.map(\.text) == ["v"])
    }

    @Test func holdsBackNoMoreThanADelimiter() throws {
        var parser = try MultipartParser(boundary: MultipartBoundary("xyz"))
        try parser.append(crlf("--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nabc\r\n--xy"))
        var emitted: [UInt8] = []
        while let event = try parser.next() { if case .bodyBytes(let bytes) = event { emitted += bytes } }
        #expect(emitted == Array("abc".utf8))  // "\r\n--xy" may begin the delimiter: held back
        try parser.append(crlf("q"))  // "\r\n--xyq" is data after all
        while let event = try parser.next() { if case .bodyBytes(let bytes) = event { emitted += bytes } }
        #expect(emitted == Array("abc\r\n--xyq".utf8))
    }

    @Test func contentTypeBoundaries() throws {
        #expect(try MultipartBoundary(contentType: "multipart/form-data; boundary=abc").value == "abc")
        #expect(try MultipartBoundary(contentType: "Multipart/Form-Data;BOUNDARY=\"a b;c\"").value == "a b;c")
        #expect(try MultipartBoundary(contentType: "multipart/form-data;  boundary= t  ; charset=utf-8").value == "t")
        #expect(try MultipartBoundary(contentType: "multipart/mixed; boundary=x'()+_,-./:=?").value == "x'()+_,-./:=?")
        #expect(
            try MultipartBoundary(contentType: "multipart/form-data; boundary=" + String(repeating: "b", count: 256))
                .value.count == 256)
        let cases: [(String, MultipartError.Code)] = [
            ("multipart/form-data", .invalidBoundary),
            ("multipart/form-data; boundary=", .invalidBoundary),
            ("multipart/form-data; boundary=\"\"", .invalidBoundary),
            ("multipart/form-data; boundary=" + String(repeating: "b", count: 257), .invalidBoundary),
            ("multipart/form-data; boundary=\"a\u{01}b\"", .invalidBoundary),
            ("application/json; boundary=abc", .invalidContentType),
            ("multipart/form-data; boundary=\"unterminated", .invalidContentType),
            ("multipart/form-data; boundary=\"" + String(repeating: "\\", count: 5000) + "\"", .invalidBoundary),
        ]
        for (contentType, code) in cases {
            let error = #expect(throws: MultipartError.self) { try MultipartBoundary(contentType: contentType) }
            #expect(error?.code == code, "\(contentType.prefix(60))")
        }
    }

    @Test func contentDispositionParsing() throws {
        let ie = try ContentDisposition(parsing: #"form-data; name="f"; filename="C:\Users\me\photo.jpg""#)
        #expect(ie.filename == #"C:\Users\me\photo.jpg"#)
        #expect(ie.safeFilename == "photo.jpg")
        let latin = try ContentDisposition(parsing: "form-data; name=f; filename*=iso-8859-1'en'%E9t%E9.txt")
        #expect(latin.filenameStar == "été.txt")
        #expect(latin.filename == nil)
        #expect(try ContentDisposition(parsing: "FORM-DATA; Name=x;").name == "x")
        for bad in [
            "form-data; name", "form-data; =x", "; name=x", "form-data; name=\"x\" y",
            "form-data; filename*=UTF-8''%ZZ", "form-data; filename*=no-quotes", "form-data; filename*=koi8-r''abc",
        ] {
            let error = #expect(throws: MultipartError.self) { try ContentDisposition(parsing: bad) }
            #expect(error?.code == .invalidHeader, "\(bad)")
        }
    }
}
