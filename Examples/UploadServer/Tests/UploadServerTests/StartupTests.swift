import ExampleTestSupport
import Foundation
import Testing

/// How the server stops when it cannot start: a port another process holds is said in one line naming the option,
/// with exit status 1 (it was a fatal error with a backtrace), and the spool folder it made for itself is gone.
@Suite struct StartupTests {
    @Test(.enabled(if: onPath("env") != nil, "needs env"), .timeLimit(.minutes(1)))
    func aPortInUseIsSaidByItsOption() async throws {
        let holder = try RunningServer()
        defer { holder.stop() }
        let binary = try #require(RunningServer.binary)
        let temporary = try Outbox()  // the server's TMPDIR, where it makes its own spool folder
        defer { temporary.remove() }
        let result = try await run(
            try #require(onPath("env")), ["TMPDIR=\(temporary.url.path)", binary, "--port", String(holder.port)],
            seconds: 60)
        #expect(result.status == 1, "\(result.errors)")
        #expect(
            result.errors.contains("--port \(holder.port)") && result.errors.contains("already listening"),
            "\(result.errors)")
        #expect(!result.errors.contains("Fatal error"), "\(result.errors)")
        let left = try FileManager.default.contentsOfDirectory(atPath: temporary.url.path)
        #expect(left.isEmpty, "the spool folder it made is left: \(left)")
    }
}
