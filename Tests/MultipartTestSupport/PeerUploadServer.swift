package import Foundation
import Testing

/// Tests/Peers/upload_server.py on a free port of 127.0.0.1: it answers each upload with what python-multipart read
/// (a ``PeerReply``) and ends when this object goes away.
package final class PeerUploadServer {
    package let process = Process()
    package let input = Pipe()
    /// The script's standard output, after its first line.
    package let output = Pipe()
    /// What the script printed on its first line: its port, or what else it reports once it serves.
    package let firstLine: String
    /// The first line as a port (0 when it is not one).
    package var port: Int { Int(firstLine) ?? 0 }

    package convenience init(python: String) throws {
        try self.init(python: python, script: "upload_server.py", arguments: [])
    }

    /// A Python script of Tests/Peers that prints its port on its first line (or, with `portFirst` false, another
    /// line that says it serves) and ends when its input closes. With `quiet`, its standard error is dropped: a
    /// script left running could otherwise hold the test run's output open.
    package init(
        python: String, script: String, arguments: [String], portFirst: Bool = true, quiet: Bool = false
    ) throws {
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [Repository.peerScript(script)] + arguments
        process.standardInput = input
        process.standardOutput = output
        if quiet { process.standardError = FileHandle.nullDevice }
        try process.run()
        firstLine = try Self.line(of: output)
        if portFirst { _ = try #require(Int(firstLine), "\(script) printed no port: \(firstLine)") }
    }

    /// The next line the script prints (front.py's reports), without its newline; empty once it has ended.
    package func nextLine() throws -> String { try Self.line(of: output) }

    private static func line(of pipe: Pipe) throws -> String {
        var line = Data()
        while let byte = try pipe.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data([10]) {
            line += byte
        }
        return String(decoding: line, as: UTF8.self)
    }

    package var url: URL { URL(string: "http://127.0.0.1:\(port)/upload")! }

    /// A port on 127.0.0.1 that nothing listens on: bound by `python`, then closed.
    package static func freePort(python: String) throws -> Int {
        let script = "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"
        let result = try runProgram(python, ["-c", script])
        return try #require(Int(result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    /// Tests/Peers/front.py before the server on `targetPort`: each new connection takes the next of `actions`
    /// (`proxy`, `drop`, `status:CODE[:RETRY_AFTER]`, `redirect:CODE:LOCATION`, `continue:MS`, `refuse:CODE`: see
    /// the script), the last one repeating. With `origin`, the answers name the front where they named `origin`.
    package static func front(
        python: String, targetPort: Int, actions: [String], origin: String? = nil
    ) throws -> PeerUploadServer {
        try PeerUploadServer(
            python: python, script: "front.py",
            arguments: [String(targetPort), actions.joined(separator: ",")] + (origin.map { [$0] } ?? []))
    }

    deinit {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
