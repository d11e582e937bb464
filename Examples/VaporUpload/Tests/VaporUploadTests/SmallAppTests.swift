import ExampleTestSupport
import Foundation
import Testing

/// `smallApp`, what a new Vapor app writes with StreamingMultipartVapor, against real clients (the Hummingbird
/// example's `Scripts/small_app_checks.py` says what each form must get, for both frameworks): typed decoding of
/// multipart and urlencoded forms, SVGs refused by the route's file filter, missing and doubled fields answered 422
/// with the field's name, and nothing left in the spool folder. The hostile-client suite runs against it behind
/// nginx (`HostileClientTests`), as `Deploy/` runs it.
@Suite(.serialized) struct SmallAppTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
            "UploadServer/Scripts/small_app_checks.py"
        ).path

    /// Runs the checks with `clients` against the small app; then its spool folder must be empty.
    func check(_ clients: [String], with python: String) async throws {
        try await RunningApp.with(small: true) { app in
            let result = try await run(python, [Self.script, "\(app.url)/upload"] + clients)
            #expect(result.status == 0, "\(result.text) \(result.errors)")
            #expect(result.text.contains("\"failures\": []"), "\(result.text)")
            #expect(try app.spooledFiles() == [])
        }
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
