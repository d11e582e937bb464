import ExampleTestSupport
import Foundation
import Testing

/// The fault harness (`Tests/Faults`), bounded for CI: 50 faults in all, 10 of each kind (a full disk, a disk that
/// errs, kills on disk, a failing store, kills on S3).
/// After every wave it checks that each upload answered 200 is kept whole, each other one left nothing (no spool
/// file, no kept file, no object, no open multipart upload, no pending record, once the next start has swept), each
/// answer is the table's (507 for a full disk, 503 with `Retry-After` for a store that kept failing), the server's
/// descriptors and memory are back to idle, and no request to the store was tried past its budget; it exits 1
/// naming the first invariant broken.
@Suite(.serialized, .timeLimit(.minutes(5))) struct FaultHarnessTests {
    /// Whether this process may mount a tmpfs (root, `mount`, python3).
    static let canMount = FaultHarness.canMount

    /// Runs `script` of Tests/Faults against the UploadServer binary with `arguments`; its figures, once it passed.
    static func run(_ script: String, _ arguments: [String]) async throws -> [String: Any] {
        let server = try #require(RunningServer.binary)
        let (result, figures) = try await FaultHarness.run(script, ["--server", server] + arguments)
        #expect(result.status == 0, "\(result.text) \(result.errors)")
        return figures
    }

    /// The server's spool folder on a tmpfs that uploads fill over and over, and the server killed with SIGKILL at
    /// random bytes of uploads (resumable on every other start) and started again.
    @Test(
        .enabled(if: canMount, "needs root and mount (a small tmpfs for the spool folder) and python3"),
        .timeLimit(.minutes(5)))
    func aDiskThatFillsAndKillsLoseNothing() async throws {
        let figures = try await Self.run(
            "fault_harness.py", ["--scenario", "disk-full,kill-disk", "--faults", "10", "--seed", "50"])
        #expect((figures["disk-full"] as? Int ?? 0) >= 10 && (figures["kill-disk"] as? Int ?? 0) >= 10, "\(figures)")
        #expect((figures["accepted"] as? Int ?? 0) > 0 && (figures["failed"] as? Int ?? 0) > 0, "\(figures)")
    }

    /// Whether a FUSE file system can be mounted here (Tests/Faults/eio_fs.py): /dev/fuse, fusermount, fusepy.
    static let canMountFUSE = FaultHarness.canMountFUSE

    /// The spool folder on a file system whose writes fail with EIO at random (FUSE: device-mapper's `error` and
    /// `flakey` targets need a kernel driver a container may lack): each upload that meets one is answered 500.
    @Test(
        .enabled(if: canMountFUSE, "needs root, mount, FUSE (/dev/fuse, fusermount: apt fuse) and fusepy (pip)"),
        .timeLimit(.minutes(5)))
    func aDiskThatErrsLosesNothing() async throws {
        let figures = try await Self.run(
            "fault_harness.py", ["--scenario", "disk-eio", "--faults", "10", "--seed", "52"])
        #expect((figures["disk-eio"] as? Int ?? 0) >= 10 && (figures["accepted"] as? Int ?? 0) > 0, "\(figures)")
    }

    /// The server into moto behind Tests/Peers/flaky_s3.py, which fails a fifth of the requests that change the
    /// bucket (500, 503 `SlowDown`, resets mid-body, stalls past the server's S3 timeout, truncated answers, errors
    /// in a 200 of a completion), and the server killed at random bytes of uploads and started again.
    @Test(
        .enabled(if: S3Endpoint.motoAvailable, "needs moto[server], boto3, requests and awscli (pip)"),
        .timeLimit(.minutes(5)))
    func aFailingStoreAndKillsLoseNothing() async throws {
        let figures = try await Self.run(
            "fault_harness.py", ["--scenario", "s3,kill-s3", "--faults", "10", "--seed", "51"])
        let storeFaults = figures.filter { $0.key.hasPrefix("s3-") }.values.reduce(0) { $0 + ($1 as? Int ?? 0) }
        #expect(storeFaults >= 10 && (figures["kill-s3"] as? Int ?? 0) >= 10, "\(figures)")
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
