public import Foundation

/// What a finished program said.
public struct Finished: Sendable {
    public var status: Int32
    public var output: Data
    public var errors: String
    public var text: String { String(decoding: output, as: UTF8.self) }
}

/// Runs `executable` with `arguments` to its end, waiting on a thread of its own. A program still running after
/// `seconds` is killed, and its `errors` say so: a client or browser that hangs fails its test instead of holding the
/// whole run to CI's limit.
///
/// A test that waits for a program must not hold a thread of Swift's concurrency pool: the pool has as many threads
/// as the machine has cores (two on CI), and a browser or a 2 GiB curl upload running for a minute on one of them,
/// with another test waiting the same way, leaves no thread for every other test's async work (the server's, whose
/// request bodies then stall).
///
/// ```swift
/// let result = try await run("/usr/bin/curl", ["-sS", url])
/// #expect(result.status == 0, "\(result.errors)")
/// ```
public func run(_ executable: String, _ arguments: [String], seconds: Int = 480) async throws -> Finished {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try runWaiting(executable, arguments, seconds: seconds) }) }
            .start()
    }
}

/// ``run(_:_:seconds:)``, blocking the calling thread: for synchronous callers only, such as the conditions of
/// `.enabled(if:)`.
public func runWaiting(_ executable: String, _ arguments: [String], seconds: Int = 480) throws -> Finished {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let deadline = Deadline(process, seconds: seconds)
    let collected = LockedData()
    let done = DispatchSemaphore(value: 0)
    Thread {
        collected.set(errors.fileHandleForReading.readDataToEndOfFile())
        done.signal()
    }.start()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    done.wait()
    let killed = deadline.end() ? "\(executable) was killed after \(seconds) s\n" : ""
    return Finished(
        status: process.terminationStatus, output: data,
        errors: killed + String(decoding: collected.get(), as: UTF8.self))
}

/// The first line `process` writes to `output` (without its line feed), or what it wrote before it ended. A process
/// that has written no line after `seconds` is killed, so that the read ends.
public func firstLine(of process: Process, from output: Pipe, within seconds: Int) throws -> Data {
    let deadline = Deadline(process, seconds: seconds)
    defer { _ = deadline.end() }
    var line = Data()
    while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data([10]) {
        line += byte
    }
    return line
}

/// Kills a process that is still running `seconds` after it was made, unless ``end()`` came first.
public final class Deadline: Sendable {
    private let ended = DispatchSemaphore(value: 0)
    private let expired = LockedData()

    public init(_ process: Process, seconds: Int) {
        let pid = process.processIdentifier
        Thread { [ended, expired] in
            guard ended.wait(timeout: .now() + .seconds(seconds)) == .timedOut else { return }
            expired.set(Data([1]))
            kill(pid, SIGKILL)
        }.start()
    }

    /// Stops the watch; whether the process had been killed.
    public func end() -> Bool {
        ended.signal()
        return !expired.get().isEmpty
    }
}

/// Bytes one thread sets and another reads.
private final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()  // guarded by `lock`

    func set(_ data: Data) { lock.withLock { self.data = data } }
    func get() -> Data { lock.withLock { data } }
}

/// The first `name` on PATH.
public func onPath(_ name: String) -> String? {
    (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map { "\($0)/\(name)" }
        .first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// python3 when it can import `module`.
public func python(with module: String) -> String? {
    guard let python = onPath("python3"), let result = try? runWaiting(python, ["-c", "import \(module)"]),
        result.status == 0
    else { return nil }
    return python
}
