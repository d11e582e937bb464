import MultipartTestSupport
import StreamingMultipart
import Testing

/// Inputs built to make a parser slow, large or confused. Each must finish (linear work: the scan never restarts)
/// and either parse exactly or stop at the limit it breaches, with that limit named.
@Suite struct HostileInputTests {
    let boundary = "----WebKitFormBoundary7MA4YWxkTrZu0gW"

    /// Feeds the pieces in 64 KiB chunks and counts, without keeping, what comes out.
    struct Tally: Equatable {
        var parts = 0
        var bodyBytes = 0
    }

    /// ``feedNow(_:repeating:times:limits:)`` on a thread of its own, off the cooperative pool.
    func feed(
        _ pieces: [[UInt8]], repeating middle: [UInt8] = [], times: Int = 0, limits: MultipartParser.Limits = .default
    ) async throws -> Tally {
        try await onThreadOfItsOwn { [self] in try feedNow(pieces, repeating: middle, times: times, limits: limits) }
    }

    func feedNow(
        _ pieces: [[UInt8]], repeating middle: [UInt8] = [], times: Int = 0, limits: MultipartParser.Limits = .default
    )
        throws -> Tally
    {
        var parser = try MultipartParser(boundary: MultipartBoundary(contentTypeBoundary: boundary), limits: limits)
        var tally = Tally()
        var pending: [UInt8] = []
        func drain() throws {
            while let event = try parser.next() {
                switch event {
                case .partHeaders: tally.parts += 1
                case .bodyBytes(let bytes): tally.bodyBytes += bytes.count
                case .partEnd, .end: break
                }
            }
        }
        func push(_ bytes: [UInt8]) throws {
            pending += bytes
            while pending.count >= 65536 {
                try parser.append(Array(pending.prefix(65536)))
                pending.removeFirst(65536)
                try drain()
            }
        }
        try push(pieces[0])
        for _ in 0..<times { try push(middle) }
        for piece in pieces.dropFirst() { try push(piece) }
        try parser.append(pending)
        try drain()
        try parser.finish()
        return tally
    }

    var fileHead: [UInt8] {
        crlf("--\(boundary)\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f.bin\"\r\n\r\n")
    }
    var close: [UInt8] { crlf("\r\n--\(boundary)--\r\n") }

    @Test func sixtyFourMebibytesOfCRLF() async throws {
        let block = (0..<4096).map { UInt8($0 % 2 == 0 ? 13 : 10) }
        let tally = try await feed([fileHead, close], repeating: block, times: 16_384)
        #expect(tally == Tally(parts: 1, bodyBytes: 64 << 20))
    }

    @Test func sixtyFourMebibytesOfDelimiterNearMisses() async throws {
        // Lines every reader takes for data: the boundary cut short, after a bare CR or LF with text after it, or
        // in the middle of a line.
        let misses = [
            "\r\n--\(boundary.dropLast())", "\r\n-", "\r\n-------", "\r\n--\(boundary.prefix(19))",
            "\r--\(boundary)X", "\n--\(boundary)X", "x--\(boundary)\r\n", "x--\(boundary)--",
        ].flatMap { Array($0.utf8) }
        let block = Array((0..<(65536 / misses.count + 1)).flatMap { _ in misses }.prefix(65536))
        let tally = try await feed([fileHead, close], repeating: block, times: 1024)
        #expect(tally == Tally(parts: 1, bodyBytes: 64 << 20))
    }

    @Test func tenMegabytePreambleAndEpilogue() async throws {
        let filler = [UInt8](repeating: UInt8(ascii: "p"), count: 1000) + crlf("\r\n--\(boundary.dropLast())\r\n")
        let part = crlf("\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv")
        var parser = try MultipartParser(boundary: MultipartBoundary(contentTypeBoundary: boundary))
        var parts = 0
        for chunk in Array(repeating: filler, count: 10_000) + [part + close] + Array(repeating: filler, count: 10_000)
        {
            try parser.append(chunk)
            while let event = try parser.next() { if case .partHeaders = event { parts += 1 } }
        }
        try parser.finish()
        #expect(parts == 1)
        #expect(parser.quirks == [.preamble])
        #expect(parser.offset > 20_000_000)
    }

    @Test func aHundredThousandEmptyPartsStopAtMaxParts() async throws {
        let part = crlf("--\(boundary)\r\nContent-Disposition: form-data; name=\"e\"\r\n\r\n\r\n")
        let error = await #expect(throws: MultipartError.self) {
            try await feed([[]] + [crlf("--\(boundary)--\r\n")], repeating: part, times: 100_000)
        }
        #expect(error?.code == .limitExceeded)
        #expect(error?.message.contains("maxParts (1000)") == true)
        #expect(error?.partIndex == 1000)
        // The 1001st part's delimiter line "--boundary\r\n" starts at 1000 × part.count; the error is at its end.
        #expect(error?.offset == Int64(1000 * part.count + boundary.count + 4))
    }

    @Test func aHundredThousandEmptyPartsWithTheLimitRaised() async throws {
        var limits = MultipartParser.Limits.default
        limits.maxParts = 100_000
        let part = crlf("--\(boundary)\r\nContent-Disposition: form-data; name=\"e\"\r\n\r\n\r\n")
        let tally = try await feed(
            [[]] + [crlf("--\(boundary)--\r\n")], repeating: part, times: 100_000, limits: limits)
        #expect(tally == Tally(parts: 100_000, bodyBytes: 0))
    }

    @Test func aMegabyteHeaderLineStopsAtMaxHeaderBytes() async throws {
        let head = crlf("--\(boundary)\r\nX-Huge: ")
        let error = await #expect(throws: MultipartError.self) {
            try await feed(
                [head, crlf("\r\n\r\n") + close], repeating: [UInt8](repeating: 97, count: 1024), times: 1024)
        }
        #expect(error?.code == .limitExceeded)
        #expect(error?.message.contains("maxHeaderBytesPerPart (16384") == true)
        #expect(error?.partIndex == 0)
    }

    @Test func tenThousandHeadersStopAtMaxHeadersPerPart() async throws {
        let head = crlf("--\(boundary)\r\nContent-Disposition: form-data; name=\"a\"\r\n")
        let error = await #expect(throws: MultipartError.self) {
            try await feed([head, crlf("\r\nx") + close], repeating: crlf("X-A: b\r\n"), times: 10_000)
        }
        #expect(error?.code == .limitExceeded)
        #expect(error?.message.contains("maxHeadersPerPart (32)") == true)
        #expect(error?.offset == Int64(head.count + 31 * 8))
    }

    @Test func aFieldOverItsLimitStops() async throws {
        let head = crlf("--\(boundary)\r\nContent-Disposition: form-data; name=\"big\"\r\n\r\n")
        let error = await #expect(throws: MultipartError.self) {
            try await feed([head, close], repeating: [UInt8](repeating: 1, count: 4096), times: 1024)
        }
        #expect(error?.code == .limitExceeded)
        #expect(error?.message.contains("maxFieldBytes (1048576") == true)
        #expect(error?.offset == Int64(head.count + (1 << 20)))
    }

    @Test func aBodyOverItsLimitStops() async throws {
        var limits = MultipartParser.Limits.default
        limits.maxBodyBytes = 1 << 20
        let error = await #expect(throws: MultipartError.self) {
            try await feed(
                [fileHead, close], repeating: [UInt8](repeating: 1, count: 4096), times: 1024, limits: limits)
        }
        #expect(error?.code == .limitExceeded)
        #expect(error?.message.contains("maxBodyBytes (1048576") == true)
    }

    @Test func aBoundaryParameterOfBackslashes() {
        let contentType = "multipart/form-data; boundary=\"" + String(repeating: "\\", count: 100_000)
        let error = #expect(throws: MultipartError.self) { try MultipartBoundary(contentType: contentType) }
        #expect(error?.code == .invalidContentType)
        let closed = #expect(throws: MultipartError.self) { try MultipartBoundary(contentType: contentType + "\"") }
        #expect(closed?.code == .invalidBoundary)
    }
}
