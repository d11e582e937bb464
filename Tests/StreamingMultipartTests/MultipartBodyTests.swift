import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

@Suite struct MultipartBodyTests {
    @Test func randomBoundaryIsRedrawnWhenAPartContainsIt() throws {
        var body = MultipartBody()
        let first = body.boundary
        try body.append(.text("before --\(first.value) after", name: "sneaky"))
        #expect(body.boundary != first)
        let bytes = try body.bytes()
        let delimiter = Array("--\(body.boundary.value)".utf8)
        let occurrences = (0...(bytes.count - delimiter.count)).filter {
            Array(bytes[$0..<($0 + delimiter.count)]) == delimiter
        }
        #expect(occurrences.count == 2)  // the part's opening delimiter and the close delimiter
    }

    @Test func customBoundaryInAPartIsRejected() throws {
        var body = MultipartBody(boundary: try MultipartBoundary("fixed"))
        try body.append(.text("fine", name: "a"))
        let error = #expect(throws: MultipartError.self) {
            try body.append(.data(Data("x\r\n--fixed\r\n".utf8), name: "b", filename: "b.txt"))
        }
        #expect(error?.code == .boundaryInContent)
        #expect(error?.partIndex == 1)
        #expect(body.parts.count == 1)
    }

    @Test func onlyAReadyMadeStreamMakesABodyOneShot() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var body = MultipartBody()
        try body.append(.text("a", name: "t"))
        try body.append(.file(at: try folder.file("f.bin", contents: [1, 2, 3]), name: "f"))
        try body.append(.stream(name: "s", length: 2) { InputStream(data: Data([1, 2])) })
        #expect(body.isReproducible)
        #expect(try body.bytes() == body.bytes(), "a second read gives the same bytes")
        try body.append(.stream(InputStream(data: Data([9])), name: "once", length: 1))
        #expect(!body.isReproducible)
        #expect(!body.parts[3].content.isReproducible && body.parts[2].content.isReproducible)
        _ = try body.bytes()
        #expect(throws: MultipartError.self) { try body.bytes() }
    }

    @Test func contentLengthIsNilOnlyWithAnUnknownLength() throws {
        var body = MultipartBody()
        try body.append(.text("a", name: "a"))
        try body.append(.stream(name: "s", length: 2) { InputStream(data: Data([1, 2])) })
        #expect(body.contentLength == Int64(try body.bytes().count))
        try body.append(.stream(name: "u") { InputStream(data: Data([1, 2])) })
        #expect(body.contentLength == nil)
    }

    @Test func aNegativeStreamLengthIsRefusedWhenAppended() throws {
        var body = MultipartBody()
        let error = #expect(throws: MultipartError.self) {
            try body.append(.stream(name: "s", length: -1) { InputStream(data: Data()) })
        }
        #expect(error?.code == .lengthMismatch)
        #expect(body.parts.isEmpty)
    }

    /// Hundreds of random forms: `contentLength` equals the bytes produced, whatever the read size.
    @Test func contentLengthMatchesRandomForms() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var random = SeededGenerator(seed: 0x5EED)
        for form in 0..<300 {
            var body = MultipartBody()
            for index in 0..<Int.random(in: 0...6, using: &random) {
                let size = [0, 1, 2, 100, 5000, 70_000][Int.random(in: 0...5, using: &random)]
                let bytes = random.bytes(size)
                switch Int.random(in: 0...3, using: &random) {
                case 0:
                    try body.append(
                        .text(String(decoding: bytes.map { $0 % 64 + 32 }, as: UTF8.self), name: "t\(index)"))
                case 1: try body.append(.data(Data(bytes), name: "d\(index)", filename: "d\(index).bin"))
                case 2:
                    let file = try folder.file("f\(form)-\(index).dat", contents: bytes)
                    try body.append(.file(at: file, name: "f\(index)"))
                default:
                    try body.append(.stream(name: "s\(index)", length: size) { InputStream(data: Data(bytes)) })
                }
            }
            let bufferSize = [1, 3, 64, 1000, 65536, 1 << 20][form % 6]
            let produced = try body.bytes(bufferSize: bufferSize)
            #expect(body.contentLength == Int64(produced.count), "form \(form), reads of \(bufferSize)")
        }
    }
}
