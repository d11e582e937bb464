import Foundation
import StreamingMultipart
import StreamingMultipartCrypto
import StreamingMultipartNIO
import Testing
import Vapor
import VaporUpload

/// The app, in this process, listening on a free port of 127.0.0.1 with a spool folder of its own.
final class RunningApp: @unchecked Sendable {
    let app: Application
    let port: Int
    let spool: URL
    var url: String { "http://127.0.0.1:\(port)" }

    private init(app: Application, port: Int, spool: URL) {
        self.app = app
        self.port = port
        self.spool = spool
    }

    /// Runs `body` with the app serving; stops it and removes its spool folder after. `small` serves `smallApp`
    /// instead of the example's routes, with a spooler of `limits`.
    /// Every test client comes from 127.0.0.1, so the default `admission` lifts the uploads-per-address limit (the
    /// test of that limit sets it).
    static func with<T>(
        limits: MultipartSpooler.Limits = .default, kitRouteMaxBytes: Int? = 16 << 20,
        idleTimeoutSeconds: Int64 = 30,
        admission: UploadAdmission.Configuration = .init(maxUploads: 64, maxUploadsPerPeer: 100_000),
        behindProxy: Bool = false, small: Bool = false, _ body: (RunningApp) async throws -> T
    ) async throws -> T {
        let spool = FileManager.default.temporaryDirectory.appendingPathComponent("vapor-upload-\(UUID().uuidString)")
        let app = try await Application.make(.testing)
        app.logger.logLevel = .warning
        do {
            var settings = UploadSettings(spoolDirectory: spool, limits: limits)
            settings.kitRouteMaxBytes = kitRouteMaxBytes
            settings.idleTimeoutSeconds = idleTimeoutSeconds
            settings.admission = admission
            settings.behindProxy = behindProxy
            if small {
                try FileManager.default.createDirectory(at: spool, withIntermediateDirectories: true)
                smallApp(app, spooler: MultipartSpooler(directory: spool, limits: limits))
            } else {
                try routes(app, settings: settings)
            }
            app.http.server.configuration.hostname = "127.0.0.1"
            app.http.server.configuration.port = 0
            try await app.server.start(address: nil)
            let port = try #require(app.http.server.shared.localAddress?.port, "the server has no port")
            let running = RunningApp(app: app, port: port, spool: spool)
            let result = try await body(running)
            await app.server.shutdown()
            try await app.asyncShutdown()
            try? FileManager.default.removeItem(at: spool)
            return result
        } catch {
            await app.server.shutdown()
            try? await app.asyncShutdown()
            try? FileManager.default.removeItem(at: spool)
            throw error
        }
    }

    /// The files in the spool folder now.
    func spooledFiles() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: spool.path) }

    /// Waits, a tenth of a second at a time for at most `tries` tenths, until `condition` holds; whether it did.
    func eventually(tries: Int = 100, _ condition: () throws -> Bool) async throws -> Bool {
        for _ in 0..<tries {
            if try condition() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try condition()
    }
}

/// What both routes answer.
struct Answer: Decodable {
    struct Photo: Decodable, Equatable {
        var filename: String
        var size: Int64
        var sha256: String
    }

    struct Failure: Decodable {
        var code: String
        var message: String
    }

    var caption: String?
    var photos: [Photo]?
    var error: Failure?
}

/// What a finished program said.
struct Finished {
    var status: Int32
    var output: Data
    var errors: String
    var text: String { String(decoding: output, as: UTF8.self) }
}

/// Runs `executable` to its end on a thread of its own (not one of the concurrency pool's, which the server needs).
/// A program still running after `seconds` is killed, and its `errors` say so: a client or browser that hangs fails
/// its test instead of holding the whole run to CI's limit.
func run(_ executable: String, _ arguments: [String], seconds: Int = 480) async throws -> Finished {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            continuation.resume(
                with: Result {
                    let process = Process()
                    process.executableURL = URL(fileURLWithPath: executable)
                    process.arguments = arguments
                    let output = Pipe()
                    let errors = Pipe()
                    process.standardOutput = output
                    process.standardError = errors
                    try process.run()
                    let deadline = Deadline(process, seconds: seconds)
                    let errorText = ErrorText()
                    let done = DispatchSemaphore(value: 0)
                    Thread {
                        errorText.data = errors.fileHandleForReading.readDataToEndOfFile()
                        done.signal()
                    }.start()
                    let data = output.fileHandleForReading.readDataToEndOfFile()
                    process.waitUntilExit()
                    done.wait()
                    let killed = deadline.end() ? "\(executable) was killed after \(seconds) s\n" : ""
                    return Finished(
                        status: process.terminationStatus, output: data,
                        errors: killed + String(decoding: errorText.data, as: UTF8.self))
                })
        }.start()
    }
}

/// Kills a process that is still running `seconds` after it was made, unless `end()` came first.
final class Deadline: @unchecked Sendable {
    private let ended = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var expired = false

    init(_ process: Process, seconds: Int) {
        let pid = process.processIdentifier
        Thread { [self] in
            guard ended.wait(timeout: .now() + .seconds(seconds)) == .timedOut else { return }
            lock.withLock { expired = true }
            kill(pid, SIGKILL)
        }.start()
    }

    /// Stops the watch; whether the process had been killed.
    func end() -> Bool {
        ended.signal()
        return lock.withLock { expired }
    }
}

private final class ErrorText: @unchecked Sendable {
    var data = Data()
}

/// The first `name` on PATH.
func onPath(_ name: String) -> String? {
    (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map { "\($0)/\(name)" }
        .first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// python3 when it can import `module`.
func python(with module: String) -> String? {
    guard let python = onPath("python3") else { return nil }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = ["-c", "import \(module)"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return nil }
    process.waitUntilExit()
    return process.terminationStatus == 0 ? python : nil
}

/// Files for a test, in a folder removed after.
struct Outbox {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("vapor-outbox-\(UUID().uuidString)")

    init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }

    func file(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = url.appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Bytes that differ from file to file.
func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    return (0..<count).map { _ in
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return UInt8(truncatingIfNeeded: state)
    }
}

/// Lower-case hex SHA-256.
func sha256(_ bytes: [UInt8]) -> String {
    var digest = SHA256Digest()
    digest.update(bytes.span)
    return digest.finalize().map { String(format: "%02x", $0) }.joined()
}
