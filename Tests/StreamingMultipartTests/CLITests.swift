import Foundation
import StreamingMultipart
import Testing

/// `multipart build`, run as a program.
@Suite struct CLITests {
    /// The `multipart` binary beside the test bundle (SwiftPM puts every product in one folder).
    static let binary: String? = {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [
            beside.appendingPathComponent("multipart").path,
            beside.deletingLastPathComponent().appendingPathComponent("multipart").path,
            Repository.root.appendingPathComponent(".build/debug/multipart").path,
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    func multipart(_ arguments: [String], input: [UInt8] = []) throws -> ProgramResult? {
        guard let binary = Self.binary else {
            print("SKIP CLITests: the multipart binary was not found beside \(CommandLine.arguments[0])")
            return nil
        }
        return try runProgram(binary, arguments, input: input)
    }

    @Test func buildsTheGoldenFileBodyFromCurlSyntax() throws {
        let notes = Repository.input("notes.txt").path
        let blob = Repository.input("blob.bin").path
        guard let result = try multipart([
            "build", "--boundary", "golden-boundary-1234", "-F", "notes=@\(notes)", "-F", "blob=@\(blob)",
            "-F", "renamed=@\(notes);filename=other.csv",
        ]) else { return }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == (try Repository.golden("file")))
        #expect(result.stderr.contains("Content-Type: multipart/form-data; boundary=golden-boundary-1234\n"))
        #expect(result.stderr.contains("Content-Length: \(result.stdout.count)\n"))
    }

    @Test func keepsTheOrderOfFormAndFormStringAndReadsFieldValuesFromFiles() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let value = try folder.file("value.txt", contents: Array("from a file".utf8))
        let out = folder.url.appendingPathComponent("body.bin").path
        let headers = folder.url.appendingPathComponent("headers.txt").path
        guard let result = try multipart([
            "build", "--boundary", "B", "-F", "a=1", "--form-string", "b=@not-a-file;type=x", "-F", "c=<\(value.path)",
            "-F", #"d="quoted;value";type=text/x-d"#, "-F", "e=@\(value.path);type=text/x-e;headers=X-Note: hi",
            "-o", out, "--headers", headers,
        ]) else { return }
        #expect(result.status == 0, "\(result.stderr)")
        let body = String(decoding: try Data(contentsOf: URL(fileURLWithPath: out)), as: UTF8.self)
        let expected = [
            "--B", #"Content-Disposition: form-data; name="a""#, "", "1",
            "--B", #"Content-Disposition: form-data; name="b""#, "", "@not-a-file;type=x",
            "--B", #"Content-Disposition: form-data; name="c""#, "", "from a file",
            "--B", #"Content-Disposition: form-data; name="d""#, "Content-Type: text/x-d", "", "quoted;value",
            "--B", #"Content-Disposition: form-data; name="e"; filename="value.txt""#, "Content-Type: text/x-e",
            "X-Note: hi", "", "from a file",
            "--B--", "",
        ].joined(separator: "\r\n")
        #expect(body == expected)
        let headerText = try String(contentsOfFile: headers, encoding: .utf8)
        #expect(headerText == "Content-Type: multipart/form-data; boundary=B\nContent-Length: \(body.utf8.count)\n")
        #expect(result.stderr.isEmpty)
    }

    @Test func standardInputMakesAnUnknownLength() throws {
        guard let result = try multipart(["build", "--boundary", "B", "-F", "log=@-"], input: Array("piped".utf8))
        else { return }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutText.contains("\r\n\r\npiped\r\n--B--\r\n"))
        #expect(!result.stderr.contains("Content-Length"))
    }

    @Test(arguments: [
        (["build"], "at least one part"),
        (["build", "-F", "novalue"], "expected name=content"),
        (["build", "-F", "a=@/nonexistent/file"], "file not found"),
        (["build", "-F", "a=b;color=red"], "unknown parameter"),
        (["build", "-F", #"a="unterminated"#], "unterminated"),
        (["build", "--boundary", "bad;boundary", "-F", "a=b"], "not allowed by RFC 2046"),
        (["build", "-F", "a=b;type=text/plain\r\nX-Evil: 1"], "header injection"),
    ])
    func badArgumentsGetAOneLineErrorAndAFailingExit(_ arguments: [String], _ message: String) throws {
        guard let result = try multipart(arguments) else { return }
        #expect(result.status != 0)
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func aFailedBuildLeavesNoOutputFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let out = folder.url.appendingPathComponent("body.bin").path
        guard let result = try multipart(["build", "-F", "a=1", "-F", "b=@/nonexistent", "-o", out]) else { return }
        #expect(result.status != 0)
        #expect(try folder.contents().isEmpty)
    }
}
