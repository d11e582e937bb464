import ExampleTestSupport
import Foundation
import Testing

/// How the server stops when it cannot start: a port another process holds is said in one line naming the option,
/// with exit status 1 (it was a fatal error with a backtrace), and the spool folder it made for itself is gone.
@Suite(.timeLimit(.minutes(5))) struct StartupTests {
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

    /// An option out of its range is one usage line naming it, exit 64 (ArgumentParser's), never a fatal error.
    @Test(
        .enabled(if: RunningServer.binary != nil, "the UploadServer binary was not built"),
        arguments: [
            ["--stale-after", "-1"], ["--idle-timeout", "0"], ["--body-window", "nan"], ["--resume-window", "inf"],
            ["--max-uploads", "0"], ["--s3-part-size", "1024"], ["--node", "a-1"], ["--node", ""],
        ])
    func anOptionOutOfRangeIsNamed(_ arguments: [String]) async throws {
        let result = try await run(try #require(RunningServer.binary), ["--port", "0"] + arguments, seconds: 60)
        #expect(result.status == 64, "\(result.errors)")
        #expect(result.errors.contains(arguments[0]), "\(result.errors)")
        #expect(!result.errors.contains("Fatal error"), "\(result.errors)")
    }

    /// A number of seconds past 1e9 (32 years) is as good as forever, and the server starts: each was a number of
    /// nanoseconds that overflowed, a fatal error at start (`--stale-after 1e30`).
    @Test(.enabled(if: RunningServer.binary != nil, "the UploadServer binary was not built"))
    func aDurationPastThirtyTwoYearsIsForever() throws {
        let forever = "1e30"
        let options = [
            "--stale-after", "--header-timeout", "--idle-timeout", "--write-timeout", "--body-window",
            "--body-deadline",
            "--cut-grace", "--resume-window", "--resume-lifetime", "--s3-memory-wait",
        ]
        let server = try RunningServer(arguments: options.flatMap { [$0, forever] })
        defer { server.stop() }
        #expect(server.port > 0)
    }
}
