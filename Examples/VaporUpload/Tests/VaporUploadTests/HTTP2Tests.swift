import ExampleTestSupport
import Foundation
import Testing

/// What Vapor's own HTTP/2 gives the product: with TLS and `supportVersions` [.one, .two], the streaming route takes
/// a form over `h2` as over HTTP/1.1; and HTTP/2's attacks (the Hummingbird example's `Scripts/h2_attacks.py`) meet
/// NIO's HTTP/2 handler with its defaults, which answers each flood with a GOAWAY, but with no guard of this
/// library's after it (Vapor 4 takes no channel handler): the connection stays open after NIO's GOAWAY until the
/// client closes it or Vapor's idle timeout does. So behind nginx, as `Deploy/` runs it, nginx speaks HTTP/2 to
/// clients and answers these itself; Vapor's own HTTP/2 is for a deployment that takes that risk.
@Suite(.serialized) struct HTTP2Tests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
            "UploadServer/Scripts/h2_attacks.py"
        ).path

    /// The test certificate (ExampleTestSupport), made at test time with openssl.
    static var certificate: (cert: String, key: String)? { testCertificate }

    @Test(.enabled(if: onPath("curl") != nil && certificate != nil, "needs curl and openssl (.ci/run installs them)"))
    func curlUploadsOverHTTP2ToTheStreamingRoute() async throws {
        let certificate = try #require(Self.certificate)
        let outbox = try Outbox()
        defer { outbox.remove() }
        let (paths, expected) = try UploadRouteTests.photos(outbox)
        try await RunningApp.with(tls: certificate) { app in
            for (flag, version) in [("--http2", "2"), ("--http1.1", "1.1")] {
                let result = try await run(
                    onPath("curl")!,
                    [
                        "-sS", "--cacert", certificate.cert, flag, "-w", "\n%{http_version}", "-F", "caption=Sunset",
                        "-F", "photos[]=@\(paths[0])", "-F", "photos[]=@\(paths[1])",
                        "https://localhost:\(app.port)/upload",
                    ])
                #expect(result.status == 0, "\(result.errors)")
                let lines = result.text.split(separator: "\n")
                #expect(lines.last.map(String.init) == version, "\(flag): \(result.text)")
                let answer = try JSONDecoder().decode(Answer.self, from: Data(lines.dropLast().joined().utf8))
                #expect(answer.photos == expected, "\(flag): \(result.text)")
            }
            #expect(try app.spooledFiles() == [])
        }
    }

    /// NIO's GOAWAY comes for each flood (`ENHANCE_YOUR_CALM`; an HPACK bomb, `COMPRESSION_ERROR`), and the app
    /// serves the next client; whether the connection is then closed is Vapor's, and this records it.
    @Test(
        .enabled(
            if: python(with: "h2") != nil && certificate != nil && onPath("curl") != nil,
            "needs Python's h2, openssl and curl (.ci/run installs them)"),
        arguments: [("rapid-reset", 11), ("settings", 11), ("ping", 11), ("hpack-bomb", 9)])
    func floodsMeetNIOsGoAway(_ attack: (scenario: String, code: Int)) async throws {
        let certificate = try #require(Self.certificate)
        let interpreter = try #require(python(with: "h2"))
        try await RunningApp.with(tls: certificate) { app in
            let result = try await run(
                interpreter,
                [Self.script, String(app.port), attack.scenario, "--count", "5000", "--hold", "3", "--tls"])
            try #require(result.status == 0, "\(result.errors)")
            let report = try #require(try JSONSerialization.jsonObject(with: result.output) as? [String: Any])
            #expect(report["goaway"] as? Int == attack.code, "\(report)")
            // Open 3 s after the GOAWAY: what the docs say of Vapor's HTTP/2. A Vapor that closes has changed them.
            #expect(report["closed"] as? Bool == false, "Vapor now closes after NIO's GOAWAY: \(report)")
            print("Vapor's HTTP/2, \(attack.scenario): \(report)")
            let page = try await run(
                try #require(onPath("curl")),
                [
                    "-sS", "--http2", "--cacert", certificate.cert, "-o", "/dev/null", "-w",
                    "%{http_version} %{http_code}",
                    "https://localhost:\(app.port)/",
                ])
            #expect(page.text == "2 200", "the next client: \(page.text) \(page.errors)")
        }
    }
}
