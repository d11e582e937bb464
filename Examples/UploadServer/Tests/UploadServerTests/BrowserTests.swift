import ExampleTestSupport
import Foundation
import Testing

/// Headless Chromium and Firefox ESR submit the server's own form with two files, one name holding a `"` and one a
/// `\`: the browsers serialise the form, the server reports what arrived, the page shows it, and a screenshot is
/// taken of the page with the result on screen.
@Suite(.serialized, .enabled(if: RunningServer.binary != nil, "the UploadServer binary was not built"))
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
    }

    @Test(.enabled(if: canDrive("chromium"), "needs chromium and python3 with websocket-client"))
    func chromiumSubmitsTheForm() async throws { try await submit(with: "chromium") }

    @Test(.enabled(if: canDrive("firefox-esr"), "needs firefox-esr and python3 with websocket-client"))
    func firefoxSubmitsTheForm() async throws { try await submit(with: "firefox") }

    func submit(with browser: String) async throws {
        let server = try RunningServer()
        let outbox = try Outbox()
        defer {
            server.stop()
            outbox.remove()
        }
        let screenshot = outbox.url.appendingPathComponent("\(browser).png")
        let result = try await run(
            python(with: "websocket")!, [Self.driver, browser, "\(server.url)/", screenshot.path])
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
        #expect(try server.spooledFiles() == [])

        // The screenshot is a PNG of the whole window, kept where the test log says.
        let png = [UInt8](try Data(contentsOf: screenshot))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        let width = png[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let height = png[20..<24].reduce(0) { $0 << 8 | Int($1) }
        #expect(width >= 800 && height >= 600, "\(width)×\(height)")
        let kept = FileManager.default.temporaryDirectory.appendingPathComponent("UploadServer-\(browser).png")
        try? FileManager.default.removeItem(at: kept)
        try FileManager.default.copyItem(at: screenshot, to: kept)
        print("\(browser) screenshot after the upload: \(kept.path)")
    }
}
