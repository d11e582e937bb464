import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// One reading per body: wherever a line may be a delimiter to one parser and preamble or data to another, this
/// parser either reads what every other parser that accepts the body reads, or refuses the body.
///
/// The sweep puts `--boundary` after each kind of line break (CRLF, a bare LF, a bare CR, LF inside CRLF, blanks,
/// the middle of a line) and before each kind of ending (CRLF, bare LF, bare CR, `--`, padding, padding and text,
/// text: a longer line), in the preamble, inside a field, right after a part's header block and at the close.
/// Each body is read by Go's `mime/multipart`, Werkzeug, python-multipart, Python's `multipart` and Node's undici,
/// and by this parser whole, byte by byte and at every split, in both modes:
///
/// - strict mode (the default) accepts a body only if every reader that accepts it finds the same parts (names,
///   sizes and contents);
/// - lenient mode accepts a body only if no reader that accepts it finds more parts: it may read an LF as a line
///   break where a CRLF-only reader sees data, but never drops a line another reader takes for a delimiter.
@Suite struct DelimiterReadingsTests {
    static let boundary = "b0undary"
    static let contentType = "multipart/form-data; boundary=\(boundary)"

    struct Sample {
        var name: String
        var body: [UInt8]
    }

    static func head(_ name: String, _ lineBreak: String = "\r\n") -> String {
        "Content-Disposition: form-data; name=\"\(name)\"\(lineBreak)\(lineBreak)"
    }

    /// The sweep's bodies, named for what they hold.
    static var samples: [Sample] {
        let d = "--\(boundary)"
        let before = [
            ("", "nothing"), ("\r\n", "CRLF"), ("\n", "LF"), ("\r", "CR"), ("x", "text"), ("\r\r\n", "CR CRLF"),
            ("\n\n", "LF LF"), ("\n\r\n", "LF CRLF"), ("\r\n ", "CRLF blank"), ("\r\n\r", "CRLF CR"),
        ]
        let after = [
            ("\r\n", "CRLF"), ("\n", "LF"), ("\r", "CR"), ("--", "--"), ("--\r\n", "--CRLF"), ("--\n", "--LF"),
            (" \r\n", "blank CRLF"), ("\t\n", "tab LF"), (" x\r\n", "blank text"), ("x\r\n", "text"),
            ("-x\r\n", "dash text"), ("\r x", "CR blank text"), ("--x", "--text"),
        ]
        var samples: [Sample] = []
        for (lead, leadName) in before {
            for (tail, tailName) in after {
                let line = lead + d + tail
                let label = "\(leadName) --b \(tailName)"
                let a = head("a")
                let b = head("b")
                let c = head("c")
                let places = [
                    ("in the preamble", "\(line)\r\n\(d)\r\n\(a)1\r\n\(d)\r\n\(b)2\r\n\(d)--\r\n"),
                    ("inside a field", "\(d)\r\n\(a)1\(line)\(b)2\r\n\(d)\r\n\(c)3\r\n\(d)--\r\n"),
                    ("after a header block", "\(d)\r\n\(a)\(line)\(b)2\r\n\(d)\r\n\(c)3\r\n\(d)--\r\n"),
                    ("at the close", "\(d)\r\n\(a)1\(line)\r\n\(d)\r\n\(b)2\r\n\(d)--\r\n"),
                ]
                for (place, body) in places {
                    samples.append(Sample(name: "\(label) \(place)", body: Array(body.utf8)))
                }
            }
        }
        // Whole bodies in one line-break style, and the usual one.
        let lf = "\(d)\n\(head("a", "\n"))1\n\(d)\n\(head("b", "\n"))2\n\(d)--\n"
        let usual = "\(d)\r\n\(head("a"))1\r\n\(d)\r\n\(head("b"))2\r\n\(d)--\r\n"
        samples.append(Sample(name: "LF only", body: Array(lf.utf8)))
        samples.append(Sample(name: "CRLF", body: Array(usual.utf8)))
        return samples
    }

    typealias Part = FormReaders.Reading.Part

    /// This parser's parts, as the readers list them, or nil for an error; every chunking must agree.
    static func ours(_ sample: Sample, mode: MultipartParser.Mode) -> [Part]? {
        switch parseEveryChunking(sample.body, boundary: boundary, mode: mode) {
        case .failed: return nil
        case .parsed(let parts, _):
            return parts.map {
                Part(
                    name: $0.name, filename: $0.head.filename, size: $0.body.count,
                    sha256: sha256Hex($0.body))
            }
        }
    }

    @Test(.enabled(if: FormReaders.missing == nil, "needs \(FormReaders.missing ?? "") (.ci/run installs them)"))
    func everyReaderThatAcceptsABodyReadsWhatThisParserReadsOrItRefuses() throws {
        let samples = Self.samples
        let readings = try FormReaders.read(
            samples.map { FormReaders.Body(contentType: Self.contentType, bytes: $0.body) })
        var refused: [MultipartParser.Mode: Int] = [.strict: 0, .lenient: 0]
        for (index, sample) in samples.enumerated() {
            let peers = zip(FormReaders.names, readings.map { $0[index] }).compactMap { name, reading in
                reading.parts.map { (name, $0) }
            }
            let peerSummary = peers.map { "\($0.0): \($0.1.map { "\($0.name)[\($0.size)]" })" }
            if let strict = Self.ours(sample, mode: .strict) {
                for (name, parts) in peers {
                    #expect(
                        parts.sorted() == strict.sorted(),
                        "\(sample.name): strict mode read \(strict.map { "\($0.name)[\($0.size)]" }), \(name) otherwise (\(peerSummary))"
                    )
                }
            } else {
                refused[.strict]! += 1
            }
            if let lenient = Self.ours(sample, mode: .lenient) {
                for (name, parts) in peers {
                    #expect(
                        parts.count <= lenient.count,
                        "\(sample.name): lenient mode read \(lenient.map { "\($0.name)[\($0.size)]" }), \(name) more (\(peerSummary))"
                    )
                }
            } else {
                refused[.lenient]! += 1
            }
        }
        // The usual body and an LF-only one are read, by each mode that reads them.
        #expect(Self.ours(samples[samples.count - 1], mode: .strict)?.map(\.name) == ["a", "b"])
        #expect(Self.ours(samples[samples.count - 2], mode: .lenient)?.map(\.name) == ["a", "b"])
        print(
            "DelimiterReadingsTests: \(samples.count) bodies, refused \(refused[.strict]!) strict, \(refused[.lenient]!) lenient"
        )
    }
}
