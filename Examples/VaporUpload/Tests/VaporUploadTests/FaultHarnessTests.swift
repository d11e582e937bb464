import ExampleTestSupport
import Foundation
import Testing

/// The fault harness (`Tests/Faults/fault_harness.py --app vapor`) against the app's server binary, bounded for CI:
/// a spool folder on a tmpfs its uploads fill (10 × 507), one whose writes fail with EIO (10 × 500), and the server
/// killed at random bytes of uploads and started again (10 kills; its start sweeps what the killed one left,
/// `STALE_AFTER=0`). After every wave: each 200 names the digest of each file sent, nothing is left in the spool
/// folder, each answer is the table's, and descriptors and memory are back to idle (a refused upload's connection
/// at the idle timeout: Vapor 4 cannot close it after its answer). The app has no S3 store and no resumption.
@Suite(.serialized, .timeLimit(.minutes(5))) struct FaultHarnessTests {
    /// Runs the harness against VaporUploadServer with `arguments`; its figures, once it passed.
    static func run(_ arguments: [String]) async throws -> [String: Any] {
        let server = try #require(ServerSettingsTests.binary)
        let (result, figures) = try await FaultHarness.run(
            "fault_harness.py", ["--server", server, "--app", "vapor"] + arguments)
        #expect(result.status == 0, "\(result.text) \(result.errors)")
        return figures
    }

    @Test(
        .enabled(
            if: FaultHarness.canMount && ServerSettingsTests.binary != nil,
            "needs root, mount and python3 (a small tmpfs for the spool folder), and VaporUploadServer built"))
    func aDiskThatFillsAndKillsLoseNothing() async throws {
        let figures = try await Self.run(["--scenario", "disk-full,kill-disk", "--faults", "10", "--seed", "50"])
        #expect((figures["disk-full"] as? Int ?? 0) >= 10 && (figures["kill-disk"] as? Int ?? 0) >= 10, "\(figures)")
        #expect((figures["accepted"] as? Int ?? 0) > 0 && (figures["failed"] as? Int ?? 0) > 0, "\(figures)")
    }

    @Test(
        .enabled(
            if: FaultHarness.canMountFUSE && ServerSettingsTests.binary != nil,
            "needs root, mount, FUSE (apt fuse, pip fusepy) and VaporUploadServer built"))
    func aDiskThatErrsLosesNothing() async throws {
        let figures = try await Self.run(["--scenario", "disk-eio", "--faults", "10", "--seed", "52"])
        #expect((figures["disk-eio"] as? Int ?? 0) >= 10 && (figures["accepted"] as? Int ?? 0) > 0, "\(figures)")
    }
}
