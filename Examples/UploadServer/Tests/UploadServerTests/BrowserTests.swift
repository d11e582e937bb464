import ExampleTestSupport
import Foundation
import Testing

/// Headless Chromium and Firefox ESR submit the server's own form with two files, one name holding a `"` and one a
/// `\`: the browsers serialise the form, the server reports what arrived, the page shows it, and a screenshot is
/// taken of the page with the result on screen. Chromium does it over HTTP/2 with TLS too (the test certificate,
/// trusted by its public key), as a browser reaches a server with TLS.
@Suite(
    .serialized, .enabled(if: RunningServer.binary != nil, "the UploadServer binary was not built"),
    .timeLimit(.minutes(5)))
struct BrowserTests {
    static let driver = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/browser_upload.py").path

    static func canDrive(_ browser: String) -> Bool {
        onPath(browser) != nil && python(with: "websocket") != nil
    }

    /// What the script prints: the JSON the page shows, and whether the result table is on screen.
    struct PageResult: Decodable {
        var answer: Answer
        var visible: Bool
        /// What the page and its upload came over (Resource Timing's `nextHopProtocol`).
        var protocols: [String]
    }

    @Test(.enabled(if: canDrive("chromium"), "needs chromium and python3 with websocket-client"))
    func chromiumSubmitsTheForm() async throws { try await submit(with: "chromium") }

    @Test(.enabled(if: canDrive("firefox-esr"), "needs firefox-esr and python3 with websocket-client"))
    func firefoxSubmitsTheForm() async throws { try await submit(with: "firefox") }

    @Test(
        .enabled(if: canDrive("chromium"), "needs chromium and python3 with websocket-client"),
        .enabled(if: HTTP2Tests.certificate != nil, "needs openssl to make a certificate (.ci/run installs it)"))
    func chromiumSubmitsTheFormOverHTTP2() async throws {
        let certificate: (cert: String, key: String) = try #require(HTTP2Tests.certificate)
        try await submit(with: "chromium", certificate: certificate)
    }

    /// With `certificate`, over HTTPS, where ALPN gives the browser HTTP/2.
    func submit(with browser: String, certificate: (cert: String, key: String)? = nil) async throws {
        let tls = certificate.map { ["--tls-certificate", $0.cert, "--tls-key", $0.key] } ?? []
        let server = try RunningServer(arguments: tls)
        let outbox = try Outbox()
        defer {
            server.stop()
            outbox.remove()
        }
        let screenshot = outbox.url.appendingPathComponent("\(browser).png")
        let url = certificate == nil ? "\(server.url)/" : "https://localhost:\(server.port)/"
        let result = try await run(
            python(with: "websocket")!,
            [Self.driver, browser, url, screenshot.path] + (certificate.map { [$0.cert] } ?? []))
        #expect(result.status == 0, "\(result.errors)")
        try #require(result.status == 0, "the browser script failed")
        let page = try JSONDecoder().decode(PageResult.self, from: result.output)

        let text = Array(String(repeating: "hello from a browser\n", count: 100).utf8)
        let binary = (0..<4096).map { UInt8($0 % 256) }
        let files = try #require(page.answer.files)
        #expect(files.map(\.filename) == ["say \"cheese\".txt", "back\\slash.bin"])
        #expect(files.map(\.field) == ["files", "files"])
        #expect(files.map(\.contentType) == ["text/plain", "application/octet-stream"])
        #expect(files.map(\.sha256) == [sha256(text), sha256(binary)])
        #expect(page.answer.fields?.first { $0.name == "caption" }?.value == "from a browser")
        #expect(page.visible, "the result table is not on screen")
        if certificate != nil {
            #expect(!page.protocols.isEmpty && page.protocols.allSatisfy { $0 == "h2" }, "\(page.protocols)")
        }
        #expect(try server.spooledFiles() == [])

        // The screenshot is a PNG of the whole window, kept where the test log says.
        let png = [UInt8](try Data(contentsOf: screenshot))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        let width = png[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let height = png[20..<24].reduce(0) { $0 << 8 | Int($1) }
        #expect(width >= 800 && height >= 600, "\(width)×\(height)")
        let name = certificate == nil ? browser : "\(browser)-h2"
        let kept = FileManager.default.temporaryDirectory.appendingPathComponent("UploadServer-\(name).png")
        try? FileManager.default.removeItem(at: kept)
        try FileManager.default.copyItem(at: screenshot, to: kept)
        print("\(browser) screenshot after the upload: \(kept.path)")
    }
}
