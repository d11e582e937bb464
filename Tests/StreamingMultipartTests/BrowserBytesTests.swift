import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// The builder's bytes are a browser's bytes for the same form: headless Chromium and Firefox post a `FormData` of
/// odd names and filenames (`Tests/Peers/browser_form_bytes.py`), and the builder, given the browser's boundary,
/// must produce the very same body.
@Suite(.serialized) struct BrowserBytesTests {
    /// A form entry, as the capture script takes it.
    struct Entry: Encodable {
        var name: String
        var value: String?
        var filename: String?
        var type: String?
        var content: String?
        /// What the parser reads the name back as, when it differs: a name that holds `%22`, `%0D` or `%0A` as
        /// text goes out as it is and reads back unescaped, in every implementation of the standard.
        var readBack: String?
        var filenameReadBack: String?

        enum CodingKeys: String, CodingKey { case name, value, filename, type, content }

        static func text(_ name: String, _ value: String, readBack: String? = nil) -> Entry {
            Entry(name: name, value: value, readBack: readBack)
        }
        static func file(
            _ name: String, _ filename: String, _ type: String, _ content: String, readBack: String? = nil
        ) -> Entry {
            Entry(name: name, filename: filename, type: type, content: content, filenameReadBack: readBack)
        }
    }

    /// Names and filenames with every byte the WHATWG encoding escapes (`"`, CR, LF) and those it leaves alone
    /// (`%`, escapes that look like its own, `\`, `;`, `=`, quotes, non-ASCII). A name's lone CR or LF is left out:
    /// browsers turn it into CRLF before escaping, which the builder does not (it escapes each as it is).
    static let entries: [Entry] = [
        .text("100% \"x\"", "v1"),
        .text("a%2522b %22 %0D%0A %25 %zz %", "v2", readBack: "a%2522b \" \r\n %25 %zz %"),
        .text("crlf\r\nin a name", "v3"),
        .text("back\\slash;=é😀 'single'", "v4"),
        .text("tab\there", "v5"),
        .file("file1", "100%25 \"x\".txt", "text/plain", "one"),
        .file("file2", "a%22b%0Ac\\d\re\nf.bin", "application/octet-stream", "two", readBack: "a\"b\nc\\d\re\nf.bin"),
        .file("fichier", "résumé 😀 \"quoted\".pdf", "application/pdf", "three"),
        .file("empty", "", "application/octet-stream", ""),
    ]

    static let browsers: [String] = ["chromium", "firefox-esr"].filter { executableOnPath($0) != nil }

    /// The body and content type `browser` posts for ``entries``.
    static func captured(by browser: String) throws -> (contentType: String, body: [UInt8]) {
        let python = try #require(Peers.python3(with: ["websocket"]))
        let input = [UInt8](try JSONEncoder().encode(entries))
        let name = browser == "chromium" ? "chromium" : "firefox"
        let result = try runProgram(python, [Repository.peerScript("browser_form_bytes.py"), name], input: input)
        try #require(result.status == 0, "\(browser): \(result.stderr)")
        let reply = try JSONDecoder().decode([String: String].self, from: Data(result.stdout))
        return (try #require(reply["content_type"]), [UInt8](try #require(Data(base64Encoded: reply["body"] ?? ""))))
    }

    /// The same form from the builder.
    static func built(boundary: MultipartBoundary) throws -> MultipartBody {
        var body = MultipartBody(boundary: boundary)
        for entry in entries {
            if let filename = entry.filename {
                try body.append(
                    .data(
                        Data((entry.content ?? "").utf8), name: entry.name, filename: filename,
                        contentType: entry.type ?? "application/octet-stream"))
            } else {
                try body.append(.text(entry.value ?? "", name: entry.name))
            }
        }
        return body
    }

    @Test(
        .enabled(
            if: !browsers.isEmpty && Peers.python3(with: ["websocket"]) != nil,
            "needs chromium or firefox-esr and python3 with websocket-client (.ci/run installs them)"),
        arguments: browsers)
    func theBuilderSendsTheBrowsersBytes(browser: String) throws {
        let (contentType, browserBody) = try Self.captured(by: browser)
        let boundary = try MultipartBoundary(contentType: contentType)
        let body = try Self.built(boundary: boundary)
        let ours = try body.bytes()
        #expect(body.contentType == contentType)
        #expect(
            ours == browserBody,
            "\(browser) sent \(String(decoding: browserBody, as: UTF8.self).debugDescription), the builder \(String(decoding: ours, as: UTF8.self).debugDescription)"
        )
        // And the parser reads back what the browser meant (the WHATWG escapes undone, nothing else).
        var parser = try MultipartParser(contentType: contentType)
        try parser.append(browserBody)
        var heads: [MultipartParser.PartHead] = []
        while let event = try parser.next() { if case .partHeaders(let head) = event { heads.append(head) } }
        try parser.finish()
        #expect(heads.map(\.name) == Self.entries.map { $0.readBack ?? $0.name })
        #expect(heads.map(\.filename) == Self.entries.map { $0.filenameReadBack ?? $0.filename })
    }
}
