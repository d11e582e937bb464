import ExampleTestSupport
import Foundation
import Testing

/// SmallUploadServer, the 30 lines a new Hummingbird app writes with StreamingMultipartHummingbird, against real
/// clients (`Scripts/small_app_checks.py` says what each form must get): typed decoding of multipart and urlencoded
/// forms, SVGs refused by the route's file filter, missing and doubled fields answered 422 with the field's name,
/// and nothing left in the spool folder. The hostile-client suite runs against it too (`HostileClientTests`).
@Suite(
    .serialized, .enabled(if: RunningServer.smallBinary != nil, "SmallUploadServer was not built"),
    .timeLimit(.minutes(5)))
struct SmallServerTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/small_app_checks.py").path

    /// Runs the checks with `clients` against a new SmallUploadServer; then its spool folder must be empty.
    func check(_ clients: [String], with python: String) async throws {
        let server = try RunningServer(small: true)
        defer { server.stop() }
        let result = try await run(python, [Self.script, "\(server.url)/upload"] + clients)
        #expect(result.status == 0, "\(result.text) \(result.errors)")
        #expect(result.text.contains("\"failures\": []"), "\(result.text)")
        #expect(try server.spooledFiles() == [])
    }

    @Test(
        .enabled(if: onPath("curl") != nil && python(with: "requests") != nil, "needs curl and python3 with requests"))
    func curlAndRequestsGetWhatTheRouteSays() async throws {
        try await check(["curl", "requests"], with: python(with: "requests")!)
    }

    @Test(
        .enabled(
            if: onPath("chromium") != nil && python(with: "websocket") != nil, "needs chromium and websocket-client"))
    func chromiumPostsBothEncodings() async throws {
        try await check(["chromium"], with: python(with: "websocket")!)
    }
}
