import ExampleTestSupport
import Foundation
import Testing

/// The fault harness (`Tests/Faults`), bounded for CI. After every wave it checks that each upload answered 200 is
/// kept whole, each other one left nothing (no spool file, no kept file, once the next start has swept), each answer
/// is the table's (507 for a full disk), and the server's descriptors and memory are back to idle; it exits 1 naming
/// the first invariant broken.
@Suite(.serialized) struct FaultHarnessTests {
    static let faults = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tests/Faults")

    /// Whether this process may mount a tmpfs: root, with `mount` on the path (CI runs as root).
    static let canMount = getuid() == 0 && onPath("mount") != nil && onPath("python3") != nil

    /// Runs `script` of Tests/Faults against the UploadServer binary with `arguments`; its figures, once it passed.
    static func run(_ script: String, _ arguments: [String]) async throws -> [String: Any] {
        let server = try #require(RunningServer.binary)
        let result = try await ExampleTestSupport.run(
            try #require(onPath("python3")),
            [faults.appendingPathComponent(script).path, "--server", server] + arguments, seconds: 240)
        #expect(result.status == 0, "\(result.text) \(result.errors)")
        return try #require(try JSONSerialization.jsonObject(with: result.output) as? [String: Any])
    }

    /// The server's spool folder on a tmpfs that uploads fill over and over, and the server killed with SIGKILL at
    /// random bytes of uploads (resumable on every other start) and started again.
    @Test(
        .enabled(if: canMount, "needs root and mount (a small tmpfs for the spool folder) and python3"),
        .timeLimit(.minutes(5)))
    func aDiskThatFillsAndKillsLoseNothing() async throws {
        let figures = try await Self.run(
            "fault_harness.py", ["--scenario", "disk-full,kill-disk", "--faults", "25", "--seed", "50"])
        #expect((figures["disk-full"] as? Int ?? 0) >= 25 && (figures["kill-disk"] as? Int ?? 0) >= 25, "\(figures)")
        #expect((figures["accepted"] as? Int ?? 0) > 0 && (figures["failed"] as? Int ?? 0) > 0, "\(figures)")
    }

    /// A minute of everything at once (`soak.py`): uploads of every size checked by their digests, the hostile
    /// clients one after another, and a disk filled to its last MiB every 10 s; the server's memory and descriptors
    /// sampled each second must show no leak (the memory's last quarter within 32 MiB of its second, the descriptors
    /// back to idle). `Benchmarks/soak.sh` runs the ten-minute one and draws its curves.
    @Test(
        .enabled(if: canMount, "needs root and mount (a small tmpfs for the spool folder) and python3"),
        .timeLimit(.minutes(5)))
    func aMinuteOfMixedTrafficLeaksNothing() async throws {
        let figures = try await Self.run("soak.py", ["--seconds", "60", "--seed", "60"])
        #expect((figures["uploads"] as? Int ?? 0) > 100 && (figures["hostile runs"] as? Int ?? 0) > 5, "\(figures)")
        #expect((figures["disk full"] as? Int ?? 0) >= 4 && (figures["answered 507"] as? Int ?? 0) > 0, "\(figures)")
    }
}
