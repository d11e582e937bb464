import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// `ContentType.sniffedMediaType(of:)`: the MIME Sniffing standard's rules for an unknown type, on each row of its
/// tables, on real files that the tools of each format wrote (`Fixtures/make_sniffing.sh`), and on markup however it
/// is written or labelled.
@Suite struct MediaTypeSniffingTests {
    /// Each row of the standard's tables, its signature followed by bytes no rule reads.
    static let rows: [(bytes: [UInt8], type: String)] = [
        (Array("<!DOCTYPE HTML>".utf8), "text/html"), (Array("<html ".utf8), "text/html"),
        (Array("<HEAD>".utf8), "text/html"), (Array("<script>".utf8), "text/html"),
        (Array("<iframe ".utf8), "text/html"), (Array("<h1>".utf8), "text/html"), (Array("<div>".utf8), "text/html"),
        (Array("<font>".utf8), "text/html"), (Array("<table>".utf8), "text/html"), (Array("<a ".utf8), "text/html"),
        (Array("<style>".utf8), "text/html"), (Array("<title>".utf8), "text/html"), (Array("<b>".utf8), "text/html"),
        (Array("<body>".utf8), "text/html"), (Array("<br>".utf8), "text/html"), (Array("<p>".utf8), "text/html"),
        (Array("<!-- ".utf8), "text/html"), (Array("<?xml version".utf8), "text/xml"),
        (Array("%PDF-1.7".utf8), "application/pdf"), (Array("%!PS-Adobe-3.0".utf8), "application/postscript"),
        ([0xFE, 0xFF, 0, 0x41], "text/plain"), ([0xFF, 0xFE, 0x41, 0], "text/plain"),
        ([0xEF, 0xBB, 0xBF, 0x41], "text/plain"),
        ([0, 0, 1, 0, 1], "image/x-icon"), ([0, 0, 2, 0, 1], "image/x-icon"), (Array("BM\u{1}".utf8), "image/bmp"),
        (Array("GIF87a\u{1}".utf8), "image/gif"), (Array("GIF89a\u{1}".utf8), "image/gif"),
        (Array("RIFF\u{1}\u{2}\u{3}\u{4}WEBPVP8 ".utf8), "image/webp"),
        ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0], "image/png"), ([0xFF, 0xD8, 0xFF, 0xE0], "image/jpeg"),
        (Array("FORM\u{1}\u{2}\u{3}\u{4}AIFF".utf8), "audio/aiff"), (Array("ID3\u{4}".utf8), "audio/mpeg"),
        (Array("OggS\u{0}\u{2}".utf8), "application/ogg"), (Array("MThd\u{0}\u{0}\u{0}\u{6}\u{0}".utf8), "audio/midi"),
        (Array("RIFF\u{1}\u{2}\u{3}\u{4}AVI LIST".utf8), "video/avi"),
        (Array("RIFF\u{1}\u{2}\u{3}\u{4}WAVEfmt ".utf8), "audio/wave"),
        ([0, 0, 0, 0x18] + Array("ftypisom\u{0}\u{0}\u{2}\u{0}isommp41".utf8), "video/mp4"),
        ([0, 0, 0, 0x10] + Array("ftypmp42\u{0}\u{0}\u{0}\u{0}".utf8), "video/mp4"),
        ([0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81, 0x01, 0x42, 0x82, 0x84] + Array("webm".utf8), "video/webm"),
        ([UInt8](repeating: 0, count: 34) + Array("LP\u{1}".utf8), "application/vnd.ms-fontobject"),
        ([0, 1, 0, 0, 0, 0x0A], "font/ttf"), (Array("OTTO\u{0}".utf8), "font/otf"),
        (Array("ttcf\u{0}".utf8), "font/collection"), (Array("wOFF\u{0}".utf8), "font/woff"),
        (Array("wOF2\u{0}".utf8), "font/woff2"), ([0x1F, 0x8B, 0x08, 0], "application/x-gzip"),
        ([0x50, 0x4B, 0x03, 0x04, 0], "application/zip"),
        (Array("Rar!\u{1A}\u{7}\u{0}\u{1}".utf8), "application/x-rar-compressed"),
        (Array("plain words\r\n".utf8), "text/plain"), ([0x41, 0x00, 0x42], "application/octet-stream"),
        ([], "text/plain"),
    ]

    @Test(arguments: rows)
    func eachRowOfTheTablesGivesItsType(bytes: [UInt8], type: String) {
        #expect(ContentType.sniffedMediaType(of: bytes) == type, "\(bytes.prefix(16))")
    }

    /// What each fixture is, by the standard: the tools wrote real files of these types.
    static let fixtures: [(name: String, type: String)] = [
        ("image.png", "image/png"), ("image.jpg", "image/jpeg"), ("image.gif", "image/gif"),
        ("image.bmp", "image/bmp"), ("image.webp", "image/webp"), ("image.ico", "image/x-icon"),
        ("image.tiff", "application/octet-stream"), ("audio-id3.mp3", "audio/mpeg"),
        ("audio-no-id3.mp3", "audio/mpeg"), ("audio.ogg", "application/ogg"), ("audio.wav", "audio/wave"),
        ("audio.aiff", "audio/aiff"), ("audio.flac", "application/octet-stream"), ("audio.mid", "audio/midi"),
        ("video.mp4", "video/mp4"), ("video.webm", "video/webm"), ("video.avi", "video/avi"),
        ("archive.zip", "application/zip"), ("archive.gz", "application/x-gzip"),
        ("document.pdf", "application/pdf"), ("document.ps", "application/postscript"), ("font.ttf", "font/ttf"),
        ("font.otf", "font/otf"), ("font.woff", "font/woff"), ("font.woff2", "font/woff2"),
        ("font.ttc", "font/collection"), ("markup.svg", "image/svg+xml"), ("markup-prolog.svg", "image/svg+xml"),
        ("markup-doctype.svg", "image/svg+xml"), ("markup.xml", "text/xml"), ("markup.html", "text/html"),
        ("markup-script.html", "text/html"), ("markup-comment.html", "text/html"), ("text.csv", "text/plain"),
        ("polyglot-svg-named.png", "image/svg+xml"), ("polyglot-html-named.png", "text/html"),
        ("polyglot-png-html-tail.png", "image/png"), ("polyglot-gif-zip.gif", "image/gif"),
    ]

    static func fixture(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: Repository.fixtures.appendingPathComponent("sniffing/\(name)")))
    }

    @Test(arguments: fixtures)
    func realFilesSniffAsWhatTheyAre(name: String, type: String) throws {
        #expect(ContentType.sniffedMediaType(of: try Self.fixture(name)) == type)
    }

    @Test func everyFixtureHasItsRow() throws {
        let names = try FileManager.default.contentsOfDirectory(
            atPath: Repository.fixtures.appendingPathComponent("sniffing").path)
        #expect(Set(names) == Set(Self.fixtures.map(\.name)))
    }

    /// Markup after whitespace, in any case, or naming SVG in its doctype or after its prolog, is markup; what the
    /// standard's rows do not name stays text.
    @Test func markupIsFoundHoweverItIsWritten() {
        func sniff(_ text: String) -> String { ContentType.sniffedMediaType(of: Array(text.utf8)) }
        #expect(sniff("\u{C}\t\r\n <HtMl>") == "text/html")
        #expect(sniff("<SVG viewBox=\"0 0 1 1\">") == "image/svg+xml")
        #expect(sniff("<svg/>") == "image/svg+xml" && sniff("<svg\n/>") == "image/svg+xml")
        #expect(sniff("<?xml version=\"1.0\"?><!DOCTYPE svg><svg:svg xmlns:svg=\"x\"/>") == "image/svg+xml")
        #expect(sniff("<?xml version=\"1.0\"?><svgdata/>") == "text/xml")
        #expect(sniff("<htmlx>") == "text/plain", "a tag must end where the row ends")
        #expect(sniff("<html") == "text/plain", "no tag-terminating byte yet")
        #expect(sniff("\u{FEFF}<svg>") == "text/plain", "a byte order mark first: the standard's text")
    }

    /// Only the first 1,445 bytes count: a binary byte past them leaves a text file text.
    @Test func onlyTheResourceHeaderCounts() {
        let text = [UInt8](repeating: UInt8(ascii: "a"), count: ContentType.sniffedHeaderLength)
        #expect(ContentType.sniffedMediaType(of: text + [0]) == "text/plain")
        #expect(ContentType.sniffedMediaType(of: Array(text.dropLast()) + [0]) == "application/octet-stream")
    }

    /// Every prefix of every row and of every fixture, and random bytes: each gives a type and reads nothing
    /// outside the bytes (an out-of-range read would stop the test process).
    @Test func truncatedAndRandomBytesAreReadSafely() throws {
        var inputs = Self.rows.map(\.bytes)
        for (name, _) in Self.fixtures { inputs.append(Array(try Self.fixture(name).prefix(1500))) }
        // Signatures whose steps read lengths from the bytes: a box larger than the header, a DocType at the end.
        inputs.append([0, 0, 0x10, 0] + Array("ftypmp41".utf8) + [UInt8](repeating: 0, count: 20))
        inputs.append([0x1A, 0x45, 0xDF, 0xA3, 0x42, 0x82])
        inputs.append([0xFF, 0xFB, 0x90, 0x00])
        var random = SeededGenerator(seed: 7)
        for _ in 0..<2000 { inputs.append(random.bytes(Int(random.next() % 64))) }
        var types: Set<String> = []
        for input in inputs {
            for end in 0...input.count { types.insert(ContentType.sniffedMediaType(of: Array(input[..<end]))) }
        }
        #expect(types.isSuperset(of: ["text/plain", "application/octet-stream", "image/png", "video/mp4"]))
    }
}
