package import Foundation
import Testing

/// Tests/Peers/upload_server.py on a free port of 127.0.0.1: it answers each upload with what python-multipart read
/// (a ``PeerReply``) and ends when this object goes away.
package final class PeerUploadServer {
    package let process = Process()
    package let input = Pipe()
    /// The script's standard output, after the port's line.
    package let output = Pipe()
    package let port: Int

    package convenience init(python: String) throws {
        try self.init(python: python, script: "upload_server.py", arguments: [])
    }

    /// A Python script of Tests/Peers that prints its port on its first line and ends when its input closes.
    package init(python: String, script: String, arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [Repository.peerScript(script)] + arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data([10]) {
            line += byte
        }
        self.port = try #require(Int(String(decoding: line, as: UTF8.self)), "the upload server printed no port")
    }

    package var url: URL { URL(string: "http://127.0.0.1:\(port)/upload")! }

    /// A port on 127.0.0.1 that nothing listens on: bound by `python`, then closed.
    package static func freePort(python: String) throws -> Int {
        let script = "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"
        let result = try runProgram(python, ["-c", script])
        return try #require(Int(result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    /// Tests/Peers/front.py before the server on `targetPort`: each new connection takes the next of `actions`
    /// (`proxy`, `drop`, `status:CODE[:RETRY_AFTER]`, `redirect:CODE:LOCATION`), the last one repeating.
    package static func front(python: String, targetPort: Int, actions: [String]) throws -> PeerUploadServer {
        try PeerUploadServer(
            python: python, script: "front.py", arguments: [String(targetPort), actions.joined(separator: ",")])
    }

    deinit {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
