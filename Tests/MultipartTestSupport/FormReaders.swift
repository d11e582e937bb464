import Foundation
import StreamingMultipart

/// Other parsers of multipart/form-data, each run once on a whole batch of bodies (`Tests/Peers/read_forms.*`):
/// Go's `mime/multipart`, Werkzeug, python-multipart, Python's `multipart` and Node's undici.
package enum FormReaders {
    /// A body to read.
    package struct Body: Encodable {
        // swift-format-ignore: AlwaysUseLowerCamelCase
        package var content_type: String  // the readers' JSON key
        package var body: String  // base64

        package init(contentType: String, bytes: [UInt8]) {
            content_type = contentType
            body = Data(bytes).base64EncodedString()
        }
    }

    /// What one reader made of one body: its parts, or the error it gave.
    package struct Reading: Decodable {
        package struct Part: Decodable, Hashable, Comparable {
            package var name: String
            package var filename: String?
            package var size: Int
            package var sha256: String

            package init(name: String, filename: String?, size: Int, sha256: String) {
                self.name = name
                self.filename = filename
                self.size = size
                self.sha256 = sha256
            }

            package static func < (a: Part, b: Part) -> Bool { (a.name, a.sha256, a.size) < (b.name, b.sha256, b.size) }
        }

        package var parts: [Part]?
        package var error: String?
    }

    /// The readers' names, in the order their readings are listed.
    package static let names = ["go", "werkzeug", "python-multipart", "multipart", "undici"]

    /// Why the readers cannot run here, or nil when all five can.
    package static let missing: String? = {
        var missing: [String] = []
        if Peers.python3(with: ["werkzeug", "python_multipart", "multipart"]) == nil {
            missing.append("python3 with werkzeug, python-multipart and multipart")
        }
        if goReader == nil { missing.append("go (golang-go) to build Tests/Peers/read_forms.go") }
        if executableOnPath("node") == nil { missing.append("node") }
        return missing.isEmpty ? nil : missing.joined(separator: ", ")
    }()

    /// `Tests/Peers/read_forms.go`, built once into a folder removed when the test process exits.
    package static let goReader: String? = {
        guard let go = executableOnPath("go"), let folder = try? TemporaryFolder.forTheProcess().url else { return nil }
        let binary = folder.appendingPathComponent("read_forms").path
        let built = try? runProgram(
            "/usr/bin/env",
            [
                "GOCACHE=\(folder.appendingPathComponent("cache").path)", "GO111MODULE=off", "GOFLAGS=", go, "build",
                "-o",
                binary, Repository.peerScript("read_forms.go"),
            ])
        return built?.status == 0 ? binary : nil
    }()

    /// Every reader's reading of every body: `result[reader][body]`, readers in ``names`` order.
    package static func read(_ bodies: [Body]) throws -> [[Reading]] {
        let input = [UInt8](try JSONEncoder().encode(bodies))
        let python = try requireProgram(Peers.python3(with: ["werkzeug", "python_multipart", "multipart"]), "python3")
        let commands: [(String, [String])] = [
            (try requireProgram(goReader, "go"), []),
            (python, [Repository.peerScript("read_forms.py"), "werkzeug"]),
            (python, [Repository.peerScript("read_forms.py"), "python-multipart"]),
            (python, [Repository.peerScript("read_forms.py"), "multipart"]),
            (try requireProgram(executableOnPath("node"), "node"), [Repository.peerScript("read_forms.mjs")]),
        ]
        return try commands.map { executable, arguments in
            let result = try runProgram(executable, arguments, input: input)
            guard result.status == 0 else {
                throw MultipartError(
                    code: .streamFailed, message: "\(executable) \(arguments) failed: \(result.stderr)")
            }
            let readings = try JSONDecoder().decode([Reading].self, from: Data(result.stdout))
            guard readings.count == bodies.count else {
                throw MultipartError(code: .streamFailed, message: "\(arguments) read \(readings.count) bodies")
            }
            return readings
        }
    }

    private static func requireProgram(_ path: String?, _ name: String) throws -> String {
        guard let path else { throw MultipartError(code: .streamFailed, message: "\(name) is missing") }
        return path
    }
}
