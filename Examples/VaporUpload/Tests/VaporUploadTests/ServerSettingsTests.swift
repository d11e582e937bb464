import ExampleTestSupport
import Foundation
import Testing

/// The app's server binary (`VaporUploadServer`) with a setting it cannot serve: said once in its log, exit 1 (it
/// rethrew at the top level: a fatal error with a backtrace).
@Suite struct ServerSettingsTests {
    /// The server binary, built beside this test binary.
    static let binary: String? = {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return [beside, beside.deletingLastPathComponent()].map { $0.appendingPathComponent("VaporUploadServer").path }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    @Test(
        .enabled(if: binary != nil && onPath("env") != nil, "needs VaporUploadServer built beside the tests, and env"),
        .timeLimit(.minutes(1)))
    func aCertificateWithoutItsKeyIsSaidAndExitsOne() async throws {
        let result = try await run(
            try #require(onPath("env")),
            ["TLS_CERTIFICATE=/nonexistent.pem", try #require(Self.binary), "serve", "--port", "0"], seconds: 60)
        let said = result.text + result.errors
        #expect(result.status == 1, "\(said)")
        #expect(said.contains("TLS_CERTIFICATE and TLS_KEY go together"), "\(said)")
        #expect(!said.contains("Fatal error"), "\(said)")
    }

    /// A number the app cannot take (a negative age, an idle timeout of 0, one that is not a number) is said by its
    /// variable's name, exit 1; an age past 32 years is forever, not a fatal error.
    @Test(
        .enabled(if: binary != nil && onPath("env") != nil, "needs VaporUploadServer built beside the tests, and env"),
        .timeLimit(.minutes(1)),
        arguments: ["STALE_AFTER=-1", "STALE_AFTER=inf", "IDLE_TIMEOUT=0", "IDLE_TIMEOUT=soon"])
    func aNumberItCannotTakeIsSaidByItsName(_ setting: String) async throws {
        let result = try await run(
            try #require(onPath("env")), [setting, try #require(Self.binary), "serve", "--port", "0"], seconds: 60)
        let said = result.text + result.errors
        #expect(result.status == 1, "\(said)")
        #expect(said.contains(String(setting.prefix { $0 != "=" })), "\(said)")
        #expect(!said.contains("Fatal error"), "\(said)")
    }
}
