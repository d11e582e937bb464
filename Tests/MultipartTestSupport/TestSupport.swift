package import Foundation
package import StreamingMultipart
import Testing

/// Paths in the repository, found from this file's location.
package enum Repository {
    package static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    package static let fixtures = root.appendingPathComponent("Fixtures")
    package static func input(_ name: String) -> URL { fixtures.appendingPathComponent("inputs/\(name)") }
    package static func golden(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: fixtures.appendingPathComponent("golden/\(name).body")))
    }
    package static func peerScript(_ name: String) -> String { root.appendingPathComponent("Tests/Peers/\(name)").path }
}

/// A fresh folder under the system's temporary folder; `remove()` deletes it.
package struct TemporaryFolder {
    package let url: URL

    package init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("sm-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    package func file(_ name: String, contents: [UInt8]) throws -> URL {
        let file = url.appendingPathComponent(name)
        try Data(contents).write(to: file)
        return file
    }

    package func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }

    package func remove() { try? FileManager.default.removeItem(at: url) }

    /// A folder that lives as long as the test process (a peer built once, a certificate made once): removed when
    /// the process exits, so no run leaves it behind.
    package static func forTheProcess() throws -> TemporaryFolder {
        let folder = try TemporaryFolder()
        FoldersRemovedAtExit.add(folder.url.path)
        return folder
    }
}

/// The process-long folders, removed by an `atexit` handler registered with the first.
private enum FoldersRemovedAtExit {
    private static let paths = NSLock()
    nonisolated(unsafe) private static var list: [String] = []

    static func add(_ path: String) {
        paths.withLock {
            if list.isEmpty { atexit { FoldersRemovedAtExit.removeAll() } }
            list.append(path)
        }
    }

    private static func removeAll() {
        for path in paths.withLock({ list }) { try? FileManager.default.removeItem(atPath: path) }
    }
}

extension MultipartBody {
    /// The whole body, read through a reader in reads of `bufferSize` bytes.
    package func bytes(bufferSize: Int = 64 * 1024) throws -> [UInt8] {
        var reader = makeReader()
        return try reader.readAll(bufferSize: bufferSize)
    }
}

extension BodyReader {
    package mutating func readAll(bufferSize: Int = 64 * 1024) throws -> [UInt8] {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: bufferSize)
        while true {
            let count = try buffer.withUnsafeMutableBytes { try read(into: $0) }
            if count == 0 { return result }
            result += buffer[..<count]
        }
    }
}

/// Reads a whole `InputStream` with reads of at most `maxLength`.
package func readStream(_ stream: InputStream, maxLength: Int) throws -> [UInt8] {
    stream.open()
    defer { stream.close() }
    var result: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: maxLength)
    while true {
        let count = stream.read(&buffer, maxLength: maxLength)
        if count < 0 { throw stream.streamError ?? MultipartError(code: .streamFailed, message: "read failed") }
        if count == 0 { return result }
        result += buffer[..<count]
    }
}

/// A small seeded generator (SplitMix64), so random tests are repeatable and can name their seed.
package struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    package init(seed: UInt64) { state = seed }
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension RandomNumberGenerator {
    package mutating func bytes(_ count: Int) -> [UInt8] {
        var result = [UInt8]()
        result.reserveCapacity(count + 8)
        while result.count < count {
            withUnsafeBytes(of: next()) { result += $0 }
        }
        return Array(result.prefix(count))
    }
}

/// Whether this platform lists a process's open files in /proc/self/fd (Linux does; macOS does not, and the tests
/// that count open descriptors are disabled there with that reason).
package let canListOpenFiles = FileManager.default.fileExists(atPath: "/proc/self/fd")

/// Whether this process has `path` open (Linux: /proc/self/fd).
package func processHasOpen(_ path: String) -> Bool {
    let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return false }
    return entries.contains { entry in
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)")) == resolved
    }
}

/// What a finished program said.
package struct ProgramResult {
    package var status: Int32
    package var stdout: [UInt8]
    package var stderr: String
    package var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
}

/// SIGPIPE ignored in the test process, once: a write to a program that already exited must fail with EPIPE, not
/// kill every test.
package let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

/// Runs a program to completion, feeding `input` on standard input.
package func runProgram(_ executable: String, _ arguments: [String], input: [UInt8] = []) throws -> ProgramResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let stdin = Pipe()
    let stdout = Pipe()
    let stderr = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = stderr
    ignoreBrokenPipes
    try process.run()
    let errorData = Locked(Data())
    let done = DispatchGroup()
    DispatchQueue.global().async(group: done) {
        // A program may exit before it reads its input (a usage error): the write then fails, and that is fine.
        try? stdin.fileHandleForWriting.write(contentsOf: Data(input))
        try? stdin.fileHandleForWriting.close()
    }
    DispatchQueue.global().async(group: done) {
        errorData.set(stderr.fileHandleForReading.readDataToEndOfFile())
    }
    let output = stdout.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    done.wait()
    return ProgramResult(
        status: process.terminationStatus, stdout: [UInt8](output),
        stderr: String(decoding: errorData.get(), as: UTF8.self))
}

/// A value behind a lock, for test helpers that share one across threads.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    package init(_ value: Value) { self.value = value }
    package func get() -> Value { lock.withLock { value } }
    package func set(_ newValue: Value) { lock.withLock { value = newValue } }
    /// Changes the value in place, under the lock: a read and a write no other thread comes between.
    @discardableResult package func update<Result>(_ change: (inout Value) -> Result) -> Result {
        lock.withLock { change(&value) }
    }
}

/// The first `name` on PATH that is executable.
package func executableOnPath(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    return path.split(separator: ":").map { "\($0)/\(name)" }.first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
}

/// The peers the interop tests run against, looked for once. A test that needs one is enabled only where it is
/// present (`@Test(.enabled(if: Peers.… != nil, "why"))`), so a missing peer shows as a skipped test with its
/// reason, never as a pass; `.ci/run` installs them all.
package enum Peers {
    /// python3 with python-multipart and Werkzeug.
    package static let pythonParsers = python3(with: ["python_multipart", "werkzeug"])
    /// python3 with python-multipart (the upload server).
    package static let pythonMultipart = python3(with: ["python_multipart"])
    /// python3 with the multipart-form-data-conformance suite.
    package static let conformance = python3(with: ["multipart_form_data_conformance"])

    /// The `multipart` binary beside the test bundle (SwiftPM puts every product in one folder).
    package static let multipart: String? = {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [
            beside.appendingPathComponent("multipart").path,
            beside.deletingLastPathComponent().appendingPathComponent("multipart").path,
            Repository.root.appendingPathComponent(".build/debug/multipart").path,
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// The python3 on PATH that can import `modules`, or nil (looked up anew at each call).
    package static func python3(with modules: [String]) -> String? {
        guard let python = executableOnPath("python3") else { return nil }
        let check = modules.map { "import \($0)" }.joined(separator: "; ")
        guard let result = try? runProgram(python, ["-c", check]), result.status == 0 else { return nil }
        return python
    }
}

extension MultipartSpooler.Limits {
    /// The defaults without a body timeout, for every test that is not about timeouts: the timeout reads a wall
    /// clock, so on a shared machine whose cores are busy a starved spool would be cut as a slow client
    /// (`BodyTimeoutTests` and the example server's tests hold the timeout itself).
    package static var untimed: Self {
        var limits = Self()
        limits.bodyTimeout = nil
        return limits
    }
}
