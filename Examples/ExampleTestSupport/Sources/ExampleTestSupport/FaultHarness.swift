public import Foundation

/// The fault harness of the checkout (`Tests/Faults`), as each example's tests run it against its own server: a
/// disk that fills, a disk that errs, kills at random bytes (and, for UploadServer, a failing S3).
///
/// ```swift
/// let result = try await FaultHarness.run("fault_harness.py", ["--server", binary, "--scenario", "disk-full"])
/// #expect(result.status == 0, "\(result.errors)")
/// ```
public enum FaultHarness {
    /// `Tests/Faults` of this checkout.
    public static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tests/Faults")

    /// Whether this process may mount a tmpfs: root, with `mount` on the path (CI runs as root), and python3.
    public static let canMount = getuid() == 0 && onPath("mount") != nil && onPath("python3") != nil

    /// Whether a FUSE file system can be mounted here (Tests/Faults/eio_fs.py): /dev/fuse, fusermount, fusepy.
    public static let canMountFUSE =
        canMount && FileManager.default.fileExists(atPath: "/dev/fuse") && onPath("fusermount") != nil
        && (try? runWaiting(onPath("python3") ?? "python3", ["-c", "import fuse"]))?.status == 0

    /// Runs `script` of Tests/Faults with `arguments` (4 minutes at most); what it printed, and its figures (the
    /// JSON line it prints last) when it printed them.
    public static func run(_ script: String, _ arguments: [String]) async throws -> (
        finished: Finished, figures: [String: Any]
    ) {
        let finished = try await ExampleTestSupport.run(
            onPath("python3") ?? "python3", [folder.appendingPathComponent(script).path] + arguments, seconds: 240)
        let last = finished.text.split(separator: "\n").last.map { Data($0.utf8) } ?? Data()
        return (finished, (try? JSONSerialization.jsonObject(with: last)) as? [String: Any] ?? [:])
    }
}
