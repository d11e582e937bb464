import ExampleTestSupport
import Foundation
import Testing

/// The UploadServer binary `swift test` built beside this test bundle (or SmallUploadServer), started on a free port
/// with a spool folder of its own; `stop()` ends it.
final class RunningServer: @unchecked Sendable {
    let process = Process()
    let port: Int
    let spool: URL
    /// What the server logs (its standard error), in a file beside the spool folder.
    let log: URL
    var url: String { "http://127.0.0.1:\(port)" }

    /// The UploadServer binary, when it was built.
    static let binary = built("UploadServer")
    /// The SmallUploadServer binary, when it was built.
    static let smallBinary = built("SmallUploadServer")

    /// The binary `name` that `swift test` built, when it was.
    static func built(_ name: String) -> String? {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [
            beside.appendingPathComponent(name).path,
            beside.deletingLastPathComponent().appendingPathComponent(name).path,
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent(".build/debug/\(name)").path,
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts the server with `arguments`; `launcher` runs it through another program first (`prlimit` with its
    /// options, which execs the server in its own process).
    /// `prepare` is given the spool folder before the server starts (to leave in it what a crashed run would).
    /// `environment` is added to this process's for the server (S3 credentials, say). Every test client comes from
    /// 127.0.0.1, so the limit per address is lifted unless `arguments` set it (the tests of that limit do).
    /// `port` and `spool` start it again where a server that was killed ran (``kill()``).
    /// `small` starts SmallUploadServer instead, which takes its spool folder alone (and `PORT`), with every default.
    init(
        arguments: [String] = [], launcher: [String] = [], environment: [String: String] = [:], small: Bool = false,
        port: Int = 0, spool: URL? = nil, prepare: (URL) throws -> Void = { _ in }
    ) throws {
        let spool =
            spool
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("upload-server-test-\(UUID().uuidString)")
        self.spool = spool
        try FileManager.default.createDirectory(at: spool, withIntermediateDirectories: true)
        try prepare(spool)
        let command: [String]
        var environment = environment
        if small {
            command = launcher + [try #require(Self.smallBinary), spool.path] + arguments
            environment["PORT"] = "0"
        } else {
            let perPeer = arguments.contains("--max-uploads-per-peer") ? [] : ["--max-uploads-per-peer", "100000"]
            let server = [try #require(Self.binary), "--port", String(port), "--spool-dir", spool.path]
            command = launcher + server + perPeer + arguments
        }
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        // The log goes to a file, not to this process's standard error: a server left running by a test process
        // that crashed would otherwise hold `swift test`'s output open, and `swift test` (and CI) would wait on it.
        log = spool.appendingPathExtension("log")
        try #require(FileManager.default.createFile(atPath: log.path, contents: nil), "cannot create \(log.path)")
        let output = Pipe()
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        // "UploadServer listening on http://127.0.0.1:PORT/, spooling to …", or "listening on http://127.0.0.1:PORT/"
        let text = String(decoding: try firstLine(of: process, from: output, within: 120), as: UTF8.self)
        guard let range = text.range(of: "127.0.0.1:"), let port = Int(text[range.upperBound...].prefix { $0.isNumber })
        else {
            process.terminate()
            process.waitUntilExit()
            let logged = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(at: spool)
            try? FileManager.default.removeItem(at: log)
            throw ServerError(message: "the server did not say its port: \(text) \(logged)")
        }
        self.port = port
    }

    struct ServerError: Error { let message: String }

    /// The files in the spool folder now.
    func spooledFiles() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: spool.path) }

    /// The server's peak resident memory so far, in KiB (Linux: `VmHWM` in /proc/PID/status).
    func peakResidentKiB() -> Int? { statusKiB("VmHWM") }

    /// The server's resident memory now, in KiB (Linux: `VmRSS` in /proc/PID/status).
    func residentKiB() -> Int? { statusKiB("VmRSS") }

    /// A line of /proc/PID/status in KiB.
    private func statusKiB(_ key: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)
        else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix("\(key):") }
        return line.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") }
    }

    /// The server's open descriptors now (Linux: the entries of /proc/PID/fd).
    func openDescriptors() -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/fd"))?.count
    }

    /// The server's open descriptors once they are at most `most`, or after 10 s: a client's last connections close
    /// on the server's side a moment after the client has gone (later on a busy machine), so a count read at once
    /// may still hold them. A leak stays above `most` and fails the check that reads this.
    func openDescriptors(settlingAt most: Int) async -> Int? {
        for _ in 0..<100 {
            if let count = openDescriptors(), count <= most { return count }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return openDescriptors()
    }

    /// The CPU time the server has used so far, in clock ticks (Linux: utime + stime in /proc/PID/stat).
    func cpuTicks() -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }

    /// Ends the server with SIGKILL, as a crash would, and leaves its spool folder and log as they are.
    func kill() {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: spool)
        try? FileManager.default.removeItem(at: log)
    }
}

/// What the server answered for an upload.
struct Answer: Decodable {
    struct Field: Decodable {
        var name: String
        var value: String
    }

    struct File: Decodable {
        var field: String
        var filename: String
        var contentType: String?
        var size: Int64
        var sha256: String?
        var crc32c: String?
    }

    struct Failure: Decodable {
        var code: String
        var message: String
        var offset: Int64?
    }

    var fields: [Field]?
    var files: [File]?
    var error: Failure?
}
