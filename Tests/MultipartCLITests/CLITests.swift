import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// `multipart build` and `multipart parse`, run as a program. `swift test` builds the binary beside the tests.
@Suite(
    .enabled(if: Peers.multipart != nil, "needs the multipart binary beside the test bundle (swift build builds it)"))
struct CLITests {
    func multipart(_ arguments: [String], input: [UInt8] = []) throws -> ProgramResult {
        try runProgram(try #require(Peers.multipart), arguments, input: input)
    }

    @Test func buildsTheGoldenFileBodyFromCurlSyntax() throws {
        let notes = Repository.input("notes.txt").path
        let blob = Repository.input("blob.bin").path
        let result = try multipart([
            "build", "--boundary", "golden-boundary-1234", "-F", "notes=@\(notes)", "-F", "blob=@\(blob)",
            "-F", "renamed=@\(notes);filename=other.csv",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == (try Repository.golden("file")))
        #expect(result.stderr.contains("Content-Type: multipart/form-data; boundary=golden-boundary-1234\n"))
        #expect(result.stderr.contains("Content-Length: \(result.stdout.count)\n"))
    }

    /// `-o` makes a file with the usual mode under the umask, as curl does, not the library's owner-only default.
    @Test func outputFileHasTheUsualMode() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let out = folder.url.appendingPathComponent("body.bin").path
        let result = try multipart(["build", "-F", "a=1", "-o", out])
        #expect(result.status == 0, "\(result.stderr)")
        let mask = umask(0)
        umask(mask)
        let mode = try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int
        #expect(mode == 0o666 & ~Int(mask))
    }

    /// `--stats` prints its line once: on standard output when `-o` names a file, else on standard error (standard
    /// output carries the body).
    @Test func statsArePrintedOnce() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let out = folder.url.appendingPathComponent("body.bin").path
        let toFile = try multipart(["build", "-F", "a=1", "-o", out, "--stats"])
        #expect(toFile.status == 0, "\(toFile.stderr)")
        #expect(toFile.stdoutText.hasPrefix("bytes=") && toFile.stdoutText.filter { $0 == "\n" }.count == 1)
        #expect(!toFile.stderr.contains("build_seconds="), "\(toFile.stderr)")
        let toStandardOutput = try multipart(["build", "-F", "a=1", "--stats"])
        #expect(!toStandardOutput.stdoutText.contains("build_seconds="))
        #expect(toStandardOutput.stderr.components(separatedBy: "build_seconds=").count == 2)
    }

    @Test func keepsTheOrderOfFormAndFormStringAndReadsFieldValuesFromFiles() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let value = try folder.file("value.txt", contents: Array("from a file".utf8))
        let out = folder.url.appendingPathComponent("body.bin").path
        let headers = folder.url.appendingPathComponent("headers.txt").path
        let result = try multipart([
            "build", "--boundary", "B", "-F", "a=1", "--form-string", "b=@not-a-file;type=x", "-F", "c=<\(value.path)",
            "-F", #"d="quoted;value";type=text/x-d"#, "-F", "e=@\(value.path);type=text/x-e;headers=X-Note: hi",
            "-o", out, "--headers", headers,
        ])
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
        let result = try multipart(["build", "--boundary", "B", "-F", "log=@-"], input: Array("piped".utf8))
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
        let result = try multipart(arguments)
        #expect(result.status != 0)
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func aFailedBuildLeavesNoOutputFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let out = folder.url.appendingPathComponent("body.bin").path
        let result = try multipart(["build", "-F", "a=1", "-F", "b=@/nonexistent", "-o", out])
        #expect(result.status != 0)
        #expect(try folder.contents().isEmpty)
    }
}

/// `multipart parse`, run as a program.
@Suite(
    .enabled(if: Peers.multipart != nil, "needs the multipart binary beside the test bundle (swift build builds it)"))
struct CLIParseTests {
    func multipart(_ arguments: [String], input: [UInt8] = []) throws -> ProgramResult {
        try CLITests().multipart(arguments, input: input)
    }

    @Test func buildPipedIntoParseRoundTripsAsJSON() throws {
        let notes = Repository.input("notes.txt").path
        let built = try multipart([
            "build", "--boundary", "RT", "-F", "a=alpha", "-F", "f=@\(notes)",
            "-F", "q=@\(notes);filename=C:\\dir\\\"x\".txt;type=text/x-q",
        ])
        let contentType = "multipart/form-data; boundary=RT"
        let parsed = try multipart(["parse", "--content-type", contentType, "--json"], input: built.stdout)
        #expect(parsed.status == 0, "\(parsed.stderr)")
        let notesData = try Data(contentsOf: Repository.input("notes.txt"))
        let expected = """
            {"parts":[{"name":"a","filename":null,"filename_star":null,"content_type":null,\
            "headers":{"Content-Disposition":"form-data; name=\\"a\\""},"size":5,"sha256":"\(sha256Hex(Array("alpha".utf8)))"},\
            {"name":"f","filename":"notes.txt","filename_star":null,"content_type":"text/plain",\
            "headers":{"Content-Disposition":"form-data; name=\\"f\\"; filename=\\"notes.txt\\"","Content-Type":"text/plain"},\
            "size":\(notesData.count),"sha256":"\(sha256Hex(notesData))"},\
            {"name":"q","filename":"C:\\\\dir\\\\\\"x\\".txt","filename_star":null,"content_type":"text/x-q",\
            "headers":{"Content-Disposition":"form-data; name=\\"q\\"; filename=\\"C:\\\\dir\\\\%22x%22.txt\\"","Content-Type":"text/x-q"},\
            "size":\(notesData.count),"sha256":"\(sha256Hex(notesData))"}]}

            """
        #expect(parsed.stdoutText == expected)
    }

    @Test func malformedInputPrintsAJSONErrorAndExits1() throws {
        let body = Array("--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\ncut".utf8)
        let result = try multipart(["parse", "--boundary", "b", "--json"], input: body)
        #expect(result.status == 1)
        let message = "the body ended inside part 1 (3 body bytes read) before its closing boundary"
        #expect(
            result.stdoutText
                == #"{"parts":[],"error":{"code":"truncated","message":"\#(message)","offset":\#(body.count)}}"# + "\n")
    }

    /// Parts are reported as each is whole, so an error after two parts still lists them, in valid JSON.
    @Test func jsonListsThePartsBeforeAnError() throws {
        let body =
            Array("--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n".utf8)
            + Array("--b\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\n2\r\n--b\r\nX".utf8)
        let result = try multipart(["parse", "--boundary", "b", "--json"], input: body)
        #expect(result.status == 1)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
        #expect((report["parts"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["a", "b"])
        #expect((report["error"] as? [String: Any])?["code"] as? String == "truncated")
    }

    /// Every way `parse --json` can fail prints exactly one JSON document with an `error` member, and exit status 1:
    /// before the parse (options, content type, encoding, input, output folder), during it, and at its end.
    @Test func everyJSONErrorPathPrintsOneJSONDocument() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let good = crlf("--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--b--\r\n")
        let blocker = try folder.file("a-file", contents: [1])  // a file where --output-dir wants a folder
        let cases: [(String, [String], [UInt8], String)] = [
            ("no boundary", ["--content-type", "multipart/form-data"], good, "invalidBoundary"),
            (
                "two boundaries", ["--content-type", "multipart/form-data; boundary=a; boundary=b"], good,
                "invalidContentType"
            ),
            ("not multipart", ["--content-type", "text/plain"], good, "invalidContentType"),
            ("br", ["--boundary", "b", "--content-encoding", "br"], good, "unsupportedContentEncoding"),
            (
                "missing input", ["--boundary", "b", folder.url.appendingPathComponent("none").path], [],
                "inputUnreadable"
            ),
            ("output folder", ["--boundary", "b", "--output-dir", blocker.path + "/parts"], good, "outputFailed"),
            ("both options", ["--boundary", "b", "--content-type", "multipart/form-data; boundary=b"], good, "usage"),
            ("bad limit", ["--boundary", "b", "--max-parts", "0"], good, "usage"),
            ("unknown option", ["--boundary", "b", "--frobnicate"], good, "usage"),
            (
                "bare CR lines", ["--boundary", "foo"],
                Array("--foo\rContent-Disposition: form-data; name=\"a\"\r\r1\r--foo--\r".utf8), "invalidDelimiter"
            ),
            ("empty body", ["--boundary", "b"], [], "boundaryNotFound"),
            ("wrong boundary", ["--boundary", "z"], good, "boundaryNotFound"),
            ("cut short", ["--boundary", "b"], Array(good.prefix(40)), "truncated"),
            ("gzip that is not", ["--boundary", "b", "--content-encoding", "gzip"], good, "invalidCompressedData"),
        ]
        for (what, arguments, input, code) in cases {
            let result = try multipart(["parse", "--json"] + arguments, input: input)
            #expect(result.status == 1, "\(what)")
            let document = try? JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any]
            #expect(document != nil, "\(what): not one JSON document: \(result.stdoutText)")
            let error = document?["error"] as? [String: Any]
            #expect(error?["code"] as? String == code, "\(what): \(result.stdoutText)")
            #expect((error?["message"] as? String)?.isEmpty == false, "\(what)")
            #expect(document?["parts"] is [Any], "\(what)")
        }
    }

    @Test func aBodyWithBareCRLineEndingsSaysWhatWasFound() throws {
        // It used to say "the body never contains the boundary", with --foo at offset 0.
        let body = Array("--foo\rContent-Disposition: form-data; name=\"a\"\r\r1\r--foo--\r".utf8)
        for mode in [[], ["--lenient"]] {
            let result = try multipart(["parse", "--boundary", "foo"] + mode, input: body)
            #expect(result.status == 1)
            #expect(result.stderr.contains("a boundary line ends in a bare CR"), "\(result.stderr)")
            #expect(result.stderr.contains("(at byte 5)"), "\(result.stderr)")
        }
    }

    /// A part's name cannot forge lines or move the cursor: the listing escapes control characters.
    @Test func theListingEscapesControlCharacters() throws {
        var body = MultipartBody(boundary: try MultipartBoundary("b"))
        try body.append(.text("v", name: "a\r\nforged\tline\u{1b}[2J\\"))
        let result = try multipart(["parse", "--boundary", "b"], input: try body.bytes())
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdoutText.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines[1].isEmpty, "\(result.stdoutText)")
        let expected = ["0", #"a\r\nforged\tline\u{1b}[2J\\"#, "-", "-", "1 bytes"].joined(separator: "\t")
        #expect(lines[0].hasPrefix(expected + "\t"), "\(lines[0])")
    }

    @Test func lenientFlagAcceptsLineFeeds() throws {
        let body = Array("--b\nContent-Disposition: form-data; name=\"a\"\n\nv\n--b--\n".utf8)
        let strict = try multipart(["parse", "--boundary", "b", "--json"], input: body)
        let lenient = try multipart(["parse", "--boundary", "b", "--json", "--lenient"], input: body)
        #expect(strict.status == 1 && strict.stdoutText.contains("invalidDelimiter"))
        #expect(lenient.status == 0 && lenient.stdoutText.contains(#""name":"a""#))
    }

    @Test func outputDirKeepsEveryPartInside() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let outside = folder.url.appendingPathComponent("parts")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        var body = MultipartBody(boundary: try MultipartBoundary("B"))
        for (index, name) in ["../../escape", "/etc/passwd", "..", ".hidden", "a/b\\c", "ok.txt", ""].enumerated() {
            try body.append(.data(Data("part \(index)".utf8), name: "n\(index)", filename: name))
        }
        try body.append(.text("field", name: "../../field"))
        let result = try multipart(["parse", "--boundary", "B", "--output-dir", outside.path], input: try body.bytes())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["parts"])
        let written = try FileManager.default.contentsOfDirectory(atPath: outside.path).sorted()
        #expect(
            written == ["0-escape", "1-passwd", "2-file", "3-hidden", "4-c", "5-ok.txt", "6-file", "7-field"].sorted())
        #expect(try String(contentsOf: outside.appendingPathComponent("5-ok.txt"), encoding: .utf8) == "part 5")
    }

    @Test func theListingTheFilesAndTheSpoolerNameAFileByOneRule() async throws {
        // A client that sends both: filename* wins (RFC 6266 §4.3) in the tool's listing and --output-dir as in the
        // spooler, made safe by the one helper. The tool used to show "safe.txt" and the spooler "../../evil.sh".
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let body = crlf(
            "--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"safe.txt\"; "
                + "filename*=UTF-8''..%2F..%2Fevil.sh\r\n\r\nx\r\n--B--\r\n")
        let listing = try multipart(["parse", "--boundary", "B"], input: body)
        #expect(listing.stdoutText.contains("\t../../evil.sh\t"), "\(listing.stdoutText)")
        let parts = folder.url.appendingPathComponent("parts").path
        _ = try multipart(["parse", "--boundary", "B", "--output-dir", parts], input: body)
        #expect(try FileManager.default.contentsOfDirectory(atPath: parts) == ["0-evil.sh"])
        let form = try await MultipartSpooler(directory: folder.url, limits: .untimed).spool(
            chunkStream(body, size: 5), contentType: "multipart/form-data; boundary=B")
        defer { form.removeFiles() }
        #expect(form.files.map(\.filename) == ["../../evil.sh"])
        #expect(form.files.map(\.safeFilename) == ["evil.sh"])
        var parser = try MultipartParser(boundary: MultipartBoundary("B"))
        try parser.append(body)
        guard case .partHeaders(let head) = try parser.next() else {
            Issue.record("no head")
            return
        }
        #expect(head.preferredFilename == "../../evil.sh" && head.safeFilename == "evil.sh")
        #expect(head.filename == "safe.txt" && head.filenameStar == "../../evil.sh")  // both still as sent
    }

    /// The README's `--output-dir parts/`: the folder is made as `mkdir -p` would, and a part that an error cuts
    /// short is removed, so the folder holds whole parts only.
    @Test func outputDirIsCreatedAndKeepsWholePartsOnly() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let parts = folder.url.appendingPathComponent("new/parts").path + "/"
        let body =
            Array("--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nwhole\r\n".utf8)
            + Array("--B\r\nContent-Disposition: form-data; name=\"b\"; filename=\"b.bin\"\r\n\r\ncut sh".utf8)
        let result = try multipart(["parse", "--boundary", "B", "--output-dir", parts], input: body)
        #expect(result.status == 1)
        #expect(result.stderr.contains("the body ended inside part 2"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: parts) == ["0-a"])
        #expect(try String(contentsOfFile: parts + "0-a", encoding: .utf8) == "whole")
    }

    /// A second parse into the same folder refuses the first file it would replace, naming it and `--force`;
    /// `--force` replaces the files, and a symbolic link in the way is replaced, not followed.
    @Test func aSecondParseIntoTheSameFolderNeedsForce() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let parts = folder.url.appendingPathComponent("parts").path
        let first = Array("--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nfirst\r\n--B--\r\n".utf8)
        let second = Array("--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nsecond\r\n--B--\r\n".utf8)
        #expect(try multipart(["parse", "--boundary", "B", "--output-dir", parts], input: first).status == 0)
        let refused = try multipart(["parse", "--boundary", "B", "--output-dir", parts, "--json"], input: second)
        #expect(refused.status == 1)
        #expect(refused.stdoutText.contains("\"code\":\"outputExists\""), "\(refused.stdoutText)")
        #expect(refused.stdoutText.contains("0-a already exists") && refused.stdoutText.contains("--force"))
        #expect(try String(contentsOfFile: parts + "/0-a", encoding: .utf8) == "first")

        let victim = folder.url.appendingPathComponent("victim").path
        try Data("untouched".utf8).write(to: URL(fileURLWithPath: victim))
        try FileManager.default.removeItem(atPath: parts + "/0-a")
        try FileManager.default.createSymbolicLink(atPath: parts + "/0-a", withDestinationPath: victim)
        let forced = try multipart(["parse", "--boundary", "B", "--output-dir", parts, "--force"], input: second)
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(try String(contentsOfFile: parts + "/0-a", encoding: .utf8) == "second")
        let type = try FileManager.default.attributesOfItem(atPath: parts + "/0-a")[.type] as? FileAttributeType
        #expect(type == .typeRegular)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "untouched")

        let alone = try multipart(["parse", "--boundary", "B", "--force"], input: second)
        #expect(alone.status == 1 && alone.stderr.contains("--output-dir"), "\(alone.stderr)")
    }

    @Test func discardPrintsTheHarnessLine() throws {
        var body = MultipartBody(boundary: try MultipartBoundary("B"))
        try body.append(.text("alpha", name: "a"))
        try body.append(.data(Data(count: 200_000), name: "z", filename: "z.bin"))
        let result = try multipart(["parse", "--boundary", "B", "--discard"], input: try body.bytes())
        #expect(result.status == 0)
        let line = result.stdoutText
        #expect(line.hasPrefix("parts=2 bytes=200005 parse_seconds="), "\(line)")
    }

    @Test(arguments: ["--max-field-bytes=-1", "--max-parts=0", "--max-field-bytes=0"])
    func aLimitBelowOneIsAUsageErrorNotATrap(option: String) throws {
        let body = Array("--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n--b--\r\n".utf8)
        let result = try multipart(["parse", "--boundary", "b", option], input: body)
        #expect(result.status != 0)
        #expect(result.status < 128, "killed by a signal: \(result.status)")
        #expect(result.stderr.contains(String(option.split(separator: "=")[0])), "\(result.stderr)")
    }

    /// Usage errors as curl gives them: one line naming the problem and where help is, status 1.
    @Test(arguments: [
        (["parse", "--boundary", "b", "--bogus"], "Unknown option '--bogus'"),
        (["frobnicate"], "Unexpected argument 'frobnicate'"),
        (["build", "-F"], "Missing value"),
        (["parse", "--boundary", "b", "--max-parts", "x"], "--max-parts"),
    ])
    func usageErrorsAreOneLineAndStatus1(_ arguments: [String], _ problem: String) throws {
        let result = try multipart(arguments)
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("multipart: ") && result.stderr.contains(problem), "\(result.stderr)")
        #expect(result.stderr.filter { $0 == "\n" }.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("--help)"))
    }

    @Test func versionAndHelpGoToStandardOutput() throws {
        let version = try multipart(["--version"])
        #expect(version.status == 0 && version.stdoutText == "0.3.0\n")
        let help = try multipart(["parse", "--help"])
        #expect(help.status == 0 && help.stdoutText.contains("--max-parts"))
        #expect(!help.stdoutText.contains("(default 1000). (default: 1000)"))
    }

    @Test func anEmptyBodySaysSoAndNamesNoPartTwice() throws {
        let empty = try multipart(["parse", "--boundary", "b"])
        #expect(empty.status == 1 && empty.stderr.contains("empty body"), "\(empty.stderr)")
        let body = Array("--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--b\r\nBad\r\n\r\n".utf8)
        let bad = try multipart(["parse", "--boundary", "b"], input: body)
        #expect(bad.status == 1 && bad.stderr.contains("part 2"), "parts counted from 1: \(bad.stderr)")
        #expect(!bad.stderr.contains("(part 2)") && !bad.stderr.contains("MultipartError"), "\(bad.stderr)")
    }

    /// As curl: parameters after `type=` belong to the type, and a name may begin with a dash.
    @Test func typeParametersAndDashedNamesAreReadAsCurlReadsThem() throws {
        let built = try multipart([
            "build", "--boundary", "c", "-F", "a=1;type=text/plain; charset=utf-8", "-F", "-x=2", "--form-string",
            "-y=3",
        ])
        #expect(built.status == 0, "\(built.stderr)")
        let parsed = try multipart(["parse", "--boundary", "c", "--json"], input: built.stdout)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(parsed.stdout)) as? [String: Any])
        let parts = try #require(report["parts"] as? [[String: Any]])
        #expect(parts.compactMap { $0["name"] as? String } == ["a", "-x", "-y"])
        #expect(parts.first?["content_type"] as? String == "text/plain; charset=utf-8")
    }

    /// `build --gzip` and `--deflate` say the encoding and the exact length; `parse --content-encoding` reads them.
    @Test(arguments: [("--gzip", "gzip"), ("--deflate", "deflate")])
    func compressedBodiesRoundTrip(flag: String, encoding: String) throws {
        let notes = Repository.input("notes.txt").path
        let built = try multipart(["build", "--boundary", "Z", flag, "-F", "a=alpha", "-F", "f=@\(notes)"])
        #expect(built.status == 0, "\(built.stderr)")
        #expect(built.stderr.contains("Content-Encoding: \(encoding)\n"))
        #expect(built.stderr.contains("Content-Length: \(built.stdout.count)\n"))
        let parsed = try multipart(["parse", "--boundary", "Z", "--content-encoding", encoding], input: built.stdout)
        #expect(parsed.status == 0, "\(parsed.stderr)")
        #expect(parsed.stdoutText.hasPrefix("0\ta\t-\t-\t5 bytes\t"), "\(parsed.stdoutText)")
        #expect(parsed.stdoutText.contains("1\tf\tnotes.txt\ttext/plain\t"))
        // Read as plain, it fails, and the error says what the first bytes are and what to pass.
        let plain = try multipart(["parse", "--boundary", "Z"], input: built.stdout)
        #expect(plain.status == 1, "a compressed body read as plain must fail")
        #expect(plain.stderr.hasPrefix("multipart: ") && !plain.stderr.contains("MultipartError"), "\(plain.stderr)")
        #expect(plain.stderr.contains("pass --content-encoding \(encoding)\n"), "\(plain.stderr)")
        let json = try multipart(["parse", "--boundary", "Z", "--json"], input: built.stdout)
        #expect(json.stdoutText.contains("pass --content-encoding \(encoding)"), "\(json.stdoutText)")
    }

    /// A body that only fails to contain its boundary gets no hint about compression.
    @Test func aPlainBodyWithoutItsBoundaryGetsNoCompressionHint() throws {
        let result = try multipart(["parse", "--boundary", "Z"], input: Array("--other\r\n\r\n".utf8))
        #expect(result.status == 1 && result.stderr.contains("never contains the boundary"), "\(result.stderr)")
        #expect(!result.stderr.contains("MultipartError"), "no type names: \(result.stderr)")
        #expect(!result.stderr.contains("--content-encoding"), "\(result.stderr)")
    }

    @Test func compressionOptionsAreChecked() throws {
        let both = try multipart(["build", "--gzip", "--deflate", "-F", "a=1"])
        #expect(both.status == 1 && both.stderr.contains("at most one of --gzip and --deflate"))
        let unknown = try multipart(["parse", "--boundary", "b", "--content-encoding", "br"], input: [1])
        #expect(unknown.status == 1 && unknown.stderr.contains("is not gzip, x-gzip, deflate"), "\(unknown.stderr)")
    }

    @Test func contentTypeOrBoundaryIsRequired() throws {
        let result = try multipart(["parse"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("--content-type"))
    }
}
