import Foundation
import MultipartTestSupport
import Testing

/// `-F 'f=@a,b'`: the files nested in one multipart/mixed part, as curl sends them, and `parse` listing them as
/// files of the field.
@Suite(
    .enabled(if: Peers.multipart != nil, "needs the multipart binary beside the test bundle (swift build builds it)"))
struct MixedFilesTests {
    func multipart(_ arguments: [String], input: [UInt8] = []) throws -> ProgramResult {
        try runProgram(try #require(Peers.multipart), arguments, input: input)
    }

    /// `body` with its outer boundary and the boundary of its multipart/mixed part written `OUTER` and `INNER`,
    /// byte for byte (the files are binary).
    static func normalized(_ body: [UInt8]) throws -> [UInt8] {
        let firstLine = try #require(body.firstRange(of: Array("\r\n".utf8)))
        let outer = Array(body[2..<firstLine.lowerBound])
        let marker = Array("Content-Type: multipart/mixed; boundary=".utf8)
        let start = try #require(body.firstRange(of: marker)).upperBound
        let inner = Array(body[start...].prefix { $0 != 0x0D })
        return replacing(Array("OUTER".utf8), for: outer, in: replacing(Array("INNER".utf8), for: inner, in: body))
    }

    static func replacing(_ replacement: [UInt8], for needle: [UInt8], in bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var rest = bytes[...]
        while let range = rest.firstRange(of: needle) {
            out += rest[..<range.lowerBound] + replacement
            rest = rest[range.upperBound...]
        }
        return out + rest
    }

    @Test func aListOfFilesIsBuiltAsOneMixedPartWithANote() throws {
        let notes = Repository.input("notes.txt").path
        let blob = Repository.input("blob.bin").path
        let result = try multipart(["build", "--boundary", "OUTER", "-F", "f=@\(notes),\(blob)", "-F", "g=text"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("RFC 7578 §4.3 deprecates it"), "\(result.stderr)")
        let notesBytes = try [UInt8](Data(contentsOf: Repository.input("notes.txt")))
        let blobBytes = try [UInt8](Data(contentsOf: Repository.input("blob.bin")))
        var expected = Array(
            ("--OUTER\r\nContent-Disposition: form-data; name=\"f\"\r\n"
                + "Content-Type: multipart/mixed; boundary=INNER\r\n\r\n"
                + "--INNER\r\nContent-Disposition: attachment; filename=\"notes.txt\"\r\nContent-Type: text/plain\r\n\r\n")
                .utf8)
        expected += notesBytes
        expected += Array(
            ("\r\n--INNER\r\nContent-Disposition: attachment; filename=\"blob.bin\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\n").utf8)
        expected += blobBytes
        expected += Array(
            "\r\n--INNER--\r\n\r\n--OUTER\r\nContent-Disposition: form-data; name=\"g\"\r\n\r\ntext\r\n--OUTER--\r\n"
                .utf8)
        #expect(try Self.normalized(result.stdout) == expected)
        #expect(result.stderr.contains("Content-Length: \(result.stdout.count)\n"), "the exact length, up front")
    }

    /// The `-F` arguments compared with curl: a list of files, and a list whose files have parameters of their
    /// own (a comma ends a file's parameters).
    static let curlForms: [String] = {
        let notes = Repository.input("notes.txt").path
        let blob = Repository.input("blob.bin").path
        return [
            "f=@\(notes),\(blob)", "f=@\(notes);type=x/a,\(blob)", "f=@\(notes),\(blob);filename=b.dat;type=x/b",
            "f=@\(notes);type=text/plain; charset=utf-8,\(blob)",
        ]
    }()

    /// The same arguments through curl, caught by a socket in Python: the same bytes but for the boundaries.
    @Test(
        .enabled(if: executableOnPath("curl") != nil && Peers.python3(with: []) != nil, "needs curl and python3"),
        arguments: curlForms)
    func curlSendsTheSameBody(form: String) throws {
        let catcher = """
            import socket, subprocess, sys, threading
            listener = socket.socket(); listener.bind(("127.0.0.1", 0)); listener.listen(1)
            caught = []
            def catch():
                conn, _ = listener.accept(); data = b""
                while b"\\r\\n\\r\\n" not in data: data += conn.recv(65536)
                head, _, body = data.partition(b"\\r\\n\\r\\n")
                length = int([l.split(b":")[1] for l in head.split(b"\\r\\n") if l.lower().startswith(b"content-length")][0])
                while len(body) < length: body += conn.recv(65536)
                conn.sendall(b"HTTP/1.1 204 No Content\\r\\nConnection: close\\r\\n\\r\\n"); conn.close(); caught.append(body)
            thread = threading.Thread(target=catch); thread.start()
            subprocess.run(["curl", "-s", "-F", sys.argv[1], "-F", "g=text",
                            "http://127.0.0.1:%d/" % listener.getsockname()[1]], check=True)
            thread.join(); sys.stdout.buffer.write(caught[0])
            """
        let curl = try runProgram(try #require(Peers.python3(with: [])), ["-c", catcher, form])
        #expect(curl.status == 0, "\(curl.stderr)")
        let ours = try multipart(["build", "-F", form, "-F", "g=text"])
        #expect(ours.status == 0, "\(ours.stderr)")
        #expect(try Self.normalized(ours.stdout) == (try Self.normalized(curl.stdout)))
    }

    @Test func parseListsTheFilesUnderTheFieldsName() throws {
        let notes = Repository.input("notes.txt").path
        let built = try multipart(["build", "--boundary", "RT", "-F", "f=@\(notes),\(notes)", "-F", "g=text"])
        let parsed = try multipart(
            ["parse", "--content-type", "multipart/form-data; boundary=RT", "--json"], input: built.stdout)
        #expect(parsed.status == 0, "\(parsed.stderr)")
        struct Listing: Decodable {
            struct Part: Decodable, Equatable {
                var name: String
                var filename: String?
                var size: Int
            }
            var parts: [Part]
        }
        let listing = try JSONDecoder().decode(Listing.self, from: Data(parsed.stdout))
        let size = try Data(contentsOf: Repository.input("notes.txt")).count
        #expect(
            listing.parts == [
                .init(name: "f", filename: "notes.txt", size: size),
                .init(name: "f", filename: "notes.txt", size: size),
                .init(name: "g", filename: nil, size: 4),
            ])
        let lines = try multipart(["parse", "--content-type", "multipart/form-data; boundary=RT"], input: built.stdout)
        #expect(lines.stdoutText.split(separator: "\n").map { $0.prefix(2) } == ["0\t", "0\t", "1\t"])
    }

    /// `--output-dir` writes each file inside part 0 as `0.N-name`: two files of one name do not collide.
    @Test func outputDirKeepsEachFileInside() throws {
        let notes = Repository.input("notes.txt").path
        let built = try multipart(["build", "--boundary", "RT", "-F", "f=@\(notes),\(notes)", "-F", "g=text"])
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let parsed = try multipart(
            ["parse", "--content-type", "multipart/form-data; boundary=RT", "--output-dir", folder.url.path],
            input: built.stdout)
        #expect(parsed.status == 0, "\(parsed.stderr)")
        #expect(try folder.contents().sorted() == ["0.0-notes.txt", "0.1-notes.txt", "1-g"])
        let notesBytes = try Data(contentsOf: Repository.input("notes.txt"))
        #expect(try Data(contentsOf: folder.url.appendingPathComponent("0.1-notes.txt")) == notesBytes)
    }

    /// `type=` and `filename=` belong to the file they follow; `headers=` is refused in a list.
    @Test func eachFileOfAListTakesItsOwnParameters() throws {
        let notes = Repository.input("notes.txt").path
        let typed = try multipart(["build", "-F", "f=@\(notes);type=x/a,\(notes);filename=n.txt"])
        #expect(typed.status == 0, "\(typed.stderr)")
        let text = String(decoding: typed.stdout, as: UTF8.self)
        #expect(text.contains("filename=\"notes.txt\"\r\nContent-Type: x/a\r\n"), "\(text.prefix(600))")
        #expect(text.contains("filename=\"n.txt\"\r\nContent-Type: text/plain\r\n"), "\(text.prefix(600))")
        let result = try multipart(["build", "-F", "f=@\(notes),\(notes);headers=X-A: 1"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("not taken with a list of files"), "\(result.stderr)")
        let quoted = try multipart(["build", "-F", "f=@\"\(notes),x\""])
        #expect(quoted.status != 0 && quoted.stderr.contains("\(notes),x"), "a quoted path keeps its comma")
    }
}
