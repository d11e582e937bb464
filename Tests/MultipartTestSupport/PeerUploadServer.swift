package import Foundation
import Testing

/// Tests/Peers/upload_server.py on a free port of 127.0.0.1: it answers each upload with what python-multipart read
/// (a ``PeerReply``) and ends when this object goes away.
package final class PeerUploadServer {
    package let process = Process()
    package let input = Pipe()
    package let port: Int

    package init(python: String) throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [Repository.peerScript("upload_server.py")]
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

    deinit {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
