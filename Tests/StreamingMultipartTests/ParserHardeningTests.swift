import MultipartTestSupport
import StreamingMultipart
import Testing

/// Regressions from reading the parser as an attacker would: differentials (two readings of one body), padding
/// floods, limits that cannot be, quirks that depended on the chunking. Every body runs whole, byte by byte and at
/// every split.
@Suite struct ParserHardeningTests {
    // MARK: An empty part is never merged into the next one

    @Test func aDelimiterRightAfterTheHeadersEndsAnEmptyPartInLenientMode() throws {
        // The header block's empty line doubles as the delimiter's line break. Go and Werkzeug read an empty part;
        // python-multipart reads the delimiter as data, merging the part with the next one.
        let body = crlf(
            "--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n"
                + "--xyz\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\nbee\r\n"
                + "--xyz\r\nContent-Disposition: form-data; name=\"c\"\r\n\r\n\r\n--xyz--\r\n")
        guard case .parsed(let parts, let quirks) = parseEveryChunking(body, boundary: "xyz", mode: .lenient) else {
            Issue.record("did not parse")
            return
        }
        #expect(parts.map(\.name) == ["a", "b", "c"])
        #expect(parts.map(\.text) == ["", "bee", ""])
        #expect(quirks == [.delimiterAfterHeaders])
        // Strict mode refuses the body, at the first such delimiter, naming the readers that disagree.
        guard case .failed(let code, let offset, let partsSoFar, _) = parseEveryChunking(body, boundary: "xyz") else {
            Issue.record("strict mode read an empty part that python-multipart merges with the next")
            return
        }
        #expect(code == .invalidDelimiter)
        #expect(offset == Int64("--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n".utf8.count))
        #expect(partsSoFar.map(\.name) == ["a"])
        let error = #expect(throws: MultipartError.self) {
            var parser = try MultipartParser(boundary: MultipartBoundary("xyz"))
            try parser.append(body)
            while try parser.next() != nil {}
        }
        #expect(error?.message.contains("python-multipart") == true, "\(error?.message ?? "")")
        #expect(error?.partIndex == 0)
    }

    @Test(arguments: [MultipartParser.Mode.strict, .lenient])
    func aCloseDelimiterRightAfterTheHeadersIsRefused(mode: MultipartParser.Mode) throws {
        // Go and Werkzeug end the body there; python-multipart reads the close as data and finds part b after it.
        let body = crlf(
            "--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n--xyz--\r\n"
                + "--xyz\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\nbee\r\n--xyz--\r\n")
        #expect(parseEveryChunking(body, boundary: "xyz", mode: mode).error == .invalidDelimiter)
    }

    @Test func anEmptyFormsCloseDelimiterEndsAsInStrictModeInLenientModeToo() throws {
        // Go reads "--xyz--" followed by a bare LF or text as a preamble line, and reads on to part a.
        for close in ["--xyz--\n", "--xyz--x\r\n", "\r\n--xyz--\n"] {
            let body = crlf(close + "--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n--xyz--\r\n")
            #expect(parseEveryChunking(body, boundary: "xyz", mode: .lenient).error == .invalidDelimiter, "\(close)")
        }
        // An empty form alone still parses, with or without its final line break.
        for body in ["--xyz--\r\n", "--xyz--", "--xyz--\r\nepilogue"] {
            #expect(parseEveryChunking(crlf(body), boundary: "xyz", mode: .lenient).parts == [], "\(body)")
        }
    }

    @Test func aBareLineFeedBeforeTheFirstDelimiterNeverHidesAPart() throws {
        // Go, Werkzeug and python-multipart read parts a and b; strict mode used to skip "\n--xyz" as preamble and
        // return b alone.
        let body = crlf(
            "\n--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n"
                + "--xyz\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\n2\r\n--xyz--\r\n")
        guard case .failed(let code, let offset, let partsSoFar, _) = parseEveryChunking(body, boundary: "xyz") else {
            Issue.record("strict mode read the body")
            return
        }
        #expect(code == .invalidDelimiter)
        #expect(offset == 0)
        #expect(partsSoFar.isEmpty)
        let lenient = try #require(parseEveryChunking(body, boundary: "xyz", mode: .lenient).parts)
        #expect(lenient.map(\.name) == ["a", "b"])
    }

    @Test func aLineFeedOnlyEmptyPartInLenientMode() throws {
        let body = crlf(
            "--xyz\nContent-Disposition: form-data; name=\"a\"\n\n--xyz\nContent-Disposition: form-data; name=\"b\"\n\nb\n--xyz--\n"
        )
        let parts = try #require(parseEveryChunking(body, boundary: "xyz", mode: .lenient).parts)
        #expect(parts.map(\.name) == ["a", "b"])
        #expect(parts.map(\.text) == ["", "b"])
    }

    @Test func aBodyThatOnlyStartsLikeADelimiterIsDataInLenientMode() throws {
        let body = crlf("--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n--xyzz\r\n--xy\r\n--xyz--\r\n")
        let parts = try #require(parseEveryChunking(body, boundary: "xyz", mode: .lenient).parts)
        #expect(parts.map(\.text) == ["--xyzz\r\n--xy"])
        // A line that begins with the boundary (RFC 2046 §5.1.1), at the body's start as anywhere else.
        #expect(parseEveryChunking(body, boundary: "xyz").parts == nil)
    }

    // MARK: Padding and blanks

    @Test(arguments: [MultipartParser.Mode.strict, .lenient])
    func blanksAfterTheCloseDelimiterAreCapped(mode: MultipartParser.Mode) {
        let head = crlf("--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n--xyz--")
        let padded = head + [UInt8](repeating: 0x20, count: 64) + crlf("\r\n")
        #expect(parseEveryChunking(padded, boundary: "xyz", mode: mode).parts?.count == 1)
        let flood = head + [UInt8](repeating: 0x20, count: 65) + crlf("\r\n")
        switch parseEveryChunking(flood, boundary: "xyz", mode: mode) {
        case .failed(let code, let offset, _, _):
            #expect(mode == .strict)
            #expect(code == .invalidDelimiter)
            #expect(offset == Int64(head.count + 64))
        case .parsed(let parts, let quirks):
            #expect(mode == .lenient)
            #expect(parts.count == 1)
            #expect(quirks == [.textAfterCloseDelimiter])
        }
    }

    @Test func sixteenMegabytesOfBlanksAfterTheCloseDelimiterAreNeitherHeldNorRescanned() throws {
        let head = crlf("--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n--xyz--")
        let blanks = [UInt8](repeating: 0x20, count: 65536)
        var strict = try MultipartParser(boundary: MultipartBoundary("xyz"))
        try strict.append(head)
        while try strict.next() != nil {}
        let error = #expect(throws: MultipartError.self) {
            for _ in 0..<256 {
                try strict.append(blanks)
                while try strict.next() != nil {}
            }
        }
        #expect(error?.code == .invalidDelimiter)
        #expect(error?.offset == Int64(head.count + 64))

        var lenient = try MultipartParser(boundary: MultipartBoundary("xyz"), mode: .lenient)
        try lenient.append(head)
        var held = 0
        for _ in 0..<256 {
            try lenient.append(blanks)
            while try lenient.next() != nil {}
            held = max(held, lenient.bufferedByteCount)
        }
        try lenient.finish()
        #expect(held <= 64)
        #expect(lenient.offset == Int64(head.count + 256 * 65536))
    }

    @Test func paddingAfterAPartDelimiterIsCapped() {
        let body =
            crlf("--xyz") + [UInt8](repeating: 0x09, count: 65)
            + crlf("\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n--xyz--\r\n")
        #expect(parseEveryChunking(body, boundary: "xyz").error == .invalidDelimiter)
        #expect(parseEveryChunking(body, boundary: "xyz", mode: .lenient).error == .invalidDelimiter)
    }

    // MARK: Folded headers

    @Test func aFoldedValueWhoseFirstLineIsEmptyIsTrimmed() throws {
        let body = crlf(
            "--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\nContent-Type:\r\n text/plain\r\nX-A: one \r\n \t\r\n two\r\n\r\nv\r\n--xyz--\r\n"
        )
        let head = try #require(parseEveryChunking(body, boundary: "xyz").parts?.first?.head)
        #expect(head.contentType == "text/plain")
        #expect(head.headers["X-A"] == "one two")
    }

    @Test func aFoldedContentDispositionIsParsedUnfolded() throws {
        let body = crlf(
            "--xyz\r\nContent-Disposition: form-data;\r\n name=\"a\";\r\n\tfilename=\"f.txt\"\r\n\r\nv\r\n--xyz--\r\n")
        let head = try #require(parseEveryChunking(body, boundary: "xyz").parts?.first?.head)
        #expect(head.name == "a")
        #expect(head.filename == "f.txt")
    }

    // MARK: Quirks do not depend on the chunking

    @Test func quirksBeforeALimitErrorAreTheSameForEveryChunking() {
        var limits = MultipartParser.Limits.default
        limits.maxFieldBytes = 4
        // The header block uses CRLF; the only LF-only line break is the delimiter after the oversized field.
        let body = crlf("--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nabcdefgh\n--xyz--\r\n")
        let outcome = parseEveryChunking(body, boundary: "xyz", mode: .lenient, limits: limits)
        #expect(outcome.error == .limitExceeded)
        #expect(outcome.quirks == [])
    }

    // MARK: Limits that cannot be

    @Test(arguments: [
        ("maxFieldBytes", MultipartParser.Limits(maxFieldBytes: -1)),
        ("maxFileBytes", MultipartParser.Limits(maxFileBytes: 0)),
        ("maxParts", MultipartParser.Limits(maxParts: 0)),
        ("maxHeaderBytesPerPart", MultipartParser.Limits(maxHeaderBytesPerPart: -5)),
        ("maxHeadersPerPart", MultipartParser.Limits(maxHeadersPerPart: 0)),
        ("maxParametersPerHeader", MultipartParser.Limits(maxParametersPerHeader: 0)),
        ("maxBodyBytes", MultipartParser.Limits(maxBodyBytes: -1)),
        ("maxDecompressedBytes", MultipartParser.Limits(maxDecompressedBytes: 0)),
        ("maxDecompressionRatio", MultipartParser.Limits(maxDecompressionRatio: -3)),
    ])
    func aLimitBelowOneIsAClearError(name: String, limits: MultipartParser.Limits) throws {
        let error = #expect(throws: MultipartError.self) {
            try MultipartParser(boundary: MultipartBoundary("xyz"), limits: limits)
        }
        #expect(error?.code == .invalidLimit)
        #expect(error?.message.contains(name) == true, "\(error?.message ?? "")")
    }

    // MARK: Parameters

    @Test func parametersPerHeaderAreCapped() {
        let parameters = (0..<17).map { "; p\($0)=v" }.joined()
        let body = crlf("--xyz\r\nContent-Disposition: form-data; name=\"a\"\(parameters)\r\n\r\nv\r\n--xyz--\r\n")
        let error = #expect(throws: MultipartError.self) {
            var parser = try MultipartParser(boundary: MultipartBoundary("xyz"))
            try parser.append(body)
            while try parser.next() != nil {}
        }
        #expect(error?.code == .limitExceeded)
        #expect(error?.message.contains("maxParametersPerHeader (16)") == true, "\(error?.message ?? "")")
        #expect(error?.partIndex == 0)
    }

    @Test func aRepeatedParameterAmongManyIsFoundInLinearTime() throws {
        // 1,000 or 4,000 distinct parameters, then a repeat of the first: rejected, in CPU time that grows linearly
        // with the count (a pairwise check would take 16 times as long for 4 times the parameters).
        func run(_ count: Int) -> Duration {
            let parameters = (0..<count).map { "; p\($0)=v" }.joined() + "; p0=w"
            return measureThreadCPUTime {
                for _ in 0..<20 {
                    let error = #expect(throws: MultipartError.self) {
                        try ContentDisposition(parsing: "form-data; name=\"a\"" + parameters, maxParameters: 4096)
                    }
                    #expect(error?.message.contains("p0") == true)
                }
            }.1
        }
        let growth = linearGrowthRatio(limit: 8, medium: { run(1000) }, large: { run(4000) })
        #expect(growth.ratio < 8, "4,000 parameters took \(growth.ratio)× the CPU time of 1,000")
    }

    // MARK: Content-Type

    @Test func aContentTypeWithTwoBoundariesIsRefused() {
        for contentType in [
            "multipart/form-data; boundary=a; boundary=b", "multipart/form-data; boundary=a; BOUNDARY=a",
            "multipart/form-data; boundary=\"a\"; charset=utf-8; Boundary=b",
        ] {
            let error = #expect(throws: MultipartError.self) { try MultipartBoundary(contentType: contentType) }
            #expect(error?.message.contains("boundary") == true, "\(contentType)")
        }
    }

    // MARK: finish() and the async layer

    @Test func finishBeforeTheEventsAreDrainedSaysSo() throws {
        var parser = try MultipartParser(boundary: MultipartBoundary("xyz"))
        try parser.append(crlf("--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n--xyz--\r\n"))
        #expect(try parser.next() != nil)  // the head; the rest is pending
        _ = try parser.next()
        let error = #expect(throws: MultipartError.self) { try parser.finish() }
        #expect(error?.code == .invalidState)
        var events = 0
        while try parser.next() != nil { events += 1 }
        #expect(events == 2)  // .partEnd, .end: the parser did not fail
        try parser.finish()
    }
}
