import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// `multipart send`, run as a program against Tests/Peers/upload_server.py (python-multipart reads the parts and
/// answers their SHA-256), behind Tests/Peers/front.py for redirects, refusals, drops and silence.
@Suite(
    .serialized,
    .enabled(if: Peers.multipart != nil, "needs the multipart binary beside the test bundle (swift build builds it)"),
    .enabled(if: Peers.pythonMultipart != nil, "needs python3 with python-multipart (.ci/run installs it)")
)
struct SendTests {
    let python = Peers.pythonMultipart ?? "python3"

    func multipart(_ arguments: [String]) throws -> ProgramResult {
        try runProgram(try #require(Peers.multipart), ["send"] + arguments)
    }

    /// A text field and a 3 MiB file, with what the server should read.
    func makeForm(_ folder: TemporaryFolder) throws -> (arguments: [String], expected: [PeerPart]) {
        var random = SeededGenerator(seed: 16)
        let bytes = random.bytes(3 << 20)
        let file = try folder.file("photo.bin", contents: bytes)
        let expected = [
            PeerPart(
                name: "caption", filename: nil, content_type: nil, size: 6, sha256: sha256Hex(Array("Sunset".utf8))),
            PeerPart(
                name: "photo", filename: "photo.bin", content_type: "application/octet-stream", size: 3 << 20,
                sha256: sha256Hex(bytes)),
        ]
        return (["-F", "caption=Sunset", "-F", "photo=@\(file.path)", "--progress", "none"], expected)
    }

    func reply(_ result: ProgramResult) throws -> PeerReply {
        try JSONDecoder().decode(PeerReply.self, from: Data(result.stdout))
    }

    @Test func aFormArrivesWholeWithItsContentLengthAndHeaders() throws {
        let server = try PeerUploadServer(python: python)
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (form, expected) = try makeForm(folder)
        let result = try multipart(
            [server.url.absoluteString] + form + ["-H", "X-Tenant: 7", "-u", "ann:secret", "-X", "PUT"])
        #expect(result.status == 0, "\(result.stderr)")
        let answer = try reply(result)
        #expect(answer.parts == expected)
        #expect(answer.method == "PUT")
        #expect(answer.content_length.flatMap(Int.init) == answer.received)
        #expect(answer.transfer_encoding == nil)
        #expect(answer.headers?["x-tenant"] == "7")
        #expect(answer.headers?["authorization"] == "Basic " + Data("ann:secret".utf8).base64EncodedString())
        #expect(answer.headers?["expect"] == "100-continue", "curl's rule: bodies over 1 MiB")
        #expect(result.stderr.isEmpty, "--progress none prints nothing: \(result.stderr)")
    }

    /// `-o` writes the answer to a new file, and to a device as it is: `/dev/null` stays the device it was.
    @Test func outputGoesToAFileOrADevice() throws {
        let server = try PeerUploadServer(python: python)
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let answer = folder.url.appendingPathComponent("answer.json").path
        let written = try multipart([server.url.absoluteString, "-F", "a=1", "-o", answer, "--progress", "none"])
        #expect(written.status == 0 && written.stdout.isEmpty, "\(written.stderr)")
        #expect(
            try JSONDecoder().decode(PeerReply.self, from: Data(contentsOf: URL(fileURLWithPath: answer))).parts?.count
                == 1)
        let discarded = try multipart([server.url.absoluteString, "-F", "a=1", "-o", "/dev/null", "--progress", "none"])
        #expect(discarded.status == 0, "\(discarded.stderr)")
        let type = try FileManager.default.attributesOfItem(atPath: "/dev/null")[.type] as? FileAttributeType
        #expect(type == .typeCharacterSpecial, "-o /dev/null must not replace the device")
        let unwritable = try multipart([
            server.url.absoluteString, "-F", "a=1", "-o", "/no/such/dir/x", "--progress", "none",
        ])
        #expect(unwritable.status == 23 && unwritable.stderr.contains("cannot open /no/such/dir/x for writing"))
    }

    @Test func gzipGoesChunkedWithItsEncoding() throws {
        let server = try PeerUploadServer(python: python)
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (form, expected) = try makeForm(folder)
        let result = try multipart([server.url.absoluteString, "--gzip"] + form)
        #expect(result.status == 0, "\(result.stderr)")
        let answer = try reply(result)
        #expect(answer.parts == expected)
        #expect(answer.content_encoding == "gzip" && answer.transfer_encoding?.lowercased() == "chunked")
    }

    @Test func withLocationA307ResendsTheWholeBody() throws {
        let server = try PeerUploadServer(python: python)
        let front = try PeerUploadServer.front(
            python: python, targetPort: server.port, actions: ["redirect:307:/upload", "proxy"])
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (form, expected) = try makeForm(folder)
        let result = try multipart(["http://127.0.0.1:\(front.port)/start", "-L"] + form)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try reply(result).parts == expected)
    }

    @Test func withoutLocationTheRedirectIsTheAnswer() throws {
        let server = try PeerUploadServer(python: python)
        let front = try PeerUploadServer.front(
            python: python, targetPort: server.port, actions: ["redirect:307:/upload"])
        let result = try multipart(["http://127.0.0.1:\(front.port)/start", "-F", "a=1", "--fail"])
        #expect(result.status == 0, "a 307 is no HTTP error: \(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func aDroppedConnectionIsRetried() throws {
        let server = try PeerUploadServer(python: python)
        let front = try PeerUploadServer.front(python: python, targetPort: server.port, actions: ["drop", "proxy"])
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (form, expected) = try makeForm(folder)
        let result = try multipart(
            ["http://127.0.0.1:\(front.port)/upload", "--retry", "2", "--retry-delay", "0.05"] + form)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try reply(result).parts == expected)
        #expect(result.stderr.contains("attempt 2 of 3 in 50 ms"), "\(result.stderr)")
    }

    /// `-w`, `-D`, `-i` and `-v` say of a transfer what curl says of the same one: the same status, sizes, final URL
    /// and redirect count, the same response head (its `Date` aside), and times and speeds in curl's formats. The
    /// form goes through a 307 with `-L`, and both clients send the same headers and a boundary of one length, so
    /// that the body and the server's answer are the same size.
    @Test(.enabled(if: executableOnPath("curl") != nil, "needs curl"))
    func writeOutAndTheHeadsAreCurls() throws {
        let server = try PeerUploadServer(python: python)
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var random = SeededGenerator(seed: 33)
        let file = try folder.file("photo.bin", contents: random.bytes(10_000))
        let redirect = "http://127.0.0.1:\(server.port)/redirect/307?to=\(server.url.absoluteString)"
        let format =
            "%{http_code} %{size_upload} %{size_download} %{url_effective} %{num_redirects} %{content_type}"
            + "|%{time_total}|%{speed_upload}\\n"
        let common = [
            "-s", "-L", "-w", format, "-F", "caption=Sunset", "-F", "photo=@\(file.path);type=application/octet-stream",
            "-H", "User-Agent: test", "-H", "Accept: */*",
        ]
        let curlHead = folder.url.appendingPathComponent("curl.head").path
        let theirs = try runProgram(
            try #require(executableOnPath("curl")), [redirect, "-D", curlHead, "-o", "/dev/null", "-v"] + common)
        try #require(theirs.status == 0, "\(theirs.stderr)")
        // curl's boundary has a length of its own: ours gets the same length, so that the bodies do.
        let curlBoundary = try #require(
            theirs.stderr.components(separatedBy: "\r\n").first { $0.hasPrefix("> Content-Type: multipart/form-data") }?
                .components(separatedBy: "boundary=").last?.trimmingCharacters(in: .whitespacesAndNewlines))
        let boundary = String(repeating: "-", count: curlBoundary.count - 8) + "0123abcd"
        let ourHead = folder.url.appendingPathComponent("ours.head").path
        // curl offers no resumption: neither does ours here, so that both send the same request.
        let ours = try multipart(
            [redirect, "-D", ourHead, "-o", "/dev/null", "-v", "--boundary", boundary, "--progress", "none"]
                + ["--no-resume"] + common)
        try #require(ours.status == 0, "\(ours.stderr)")

        func fields(_ text: String) -> (exact: String, time: String, speed: String) {
            let pieces = text.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            return (pieces[0], pieces.count > 1 ? pieces[1] : "", pieces.count > 2 ? pieces[2] : "")
        }
        let (ourExact, ourTime, ourSpeed) = fields(ours.stdoutText)
        let (curlExact, curlTime, curlSpeed) = fields(theirs.stdoutText)
        #expect(ourExact == curlExact)
        #expect(ourExact.hasPrefix("200 ") && ourExact.contains(" 1 application/json"), "\(ourExact)")
        for time in [ourTime, curlTime] { #expect(time.wholeMatch(of: /[0-9]+\.[0-9]{6}/) != nil, "\(time)") }
        for speed in [ourSpeed, curlSpeed] { #expect(speed.wholeMatch(of: /[0-9]+\n/) != nil, "\(speed)") }

        func withoutDate(_ path: String) throws -> [String] {
            try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "\r\n")
                .filter { !$0.lowercased().hasPrefix("date:") }
        }
        // curl -D writes every head of a transfer that followed redirects; the last one is the answer's.
        let curlHeads = try withoutDate(curlHead)
        let lastHead = Array(curlHeads[(curlHeads.lastIndex { $0.hasPrefix("HTTP/") } ?? 0)...])
        #expect(try withoutDate(ourHead) == lastHead)
        func answerLines(_ stderr: String) -> [String] {
            let lines = stderr.replacingOccurrences(of: "\r", with: "").split(separator: "\n").map(String.init)
                .filter { $0.hasPrefix("<") && !$0.lowercased().hasPrefix("< date:") }
            return Array(lines[(lines.lastIndex { $0.hasPrefix("< HTTP/") } ?? 0)...])
        }
        #expect(answerLines(ours.stderr) == answerLines(theirs.stderr))
        #expect(ours.stderr.contains("> POST /redirect/307?to=") && ours.stderr.contains("> Content-Length: "))

        // -i puts the head before the body; a URL without a scheme is http.
        let included = try multipart(
            [String(server.url.absoluteString.dropFirst("http://".count)), "-i", "-F", "a=b", "--progress", "none"])
        #expect(included.status == 0, "\(included.stderr)")
        #expect(included.stdoutText.hasPrefix("HTTP/1.1 200 OK\r\n") && included.stdoutText.contains("\r\n\r\n{"))

        // Where no answer comes, curl's -w still writes its line, with 000; and with --fail, the status it failed on.
        let closed = "http://127.0.0.1:\(try PeerUploadServer.freePort(python: python))/upload"
        let failing = "http://127.0.0.1:\(server.port)/redirect/404?to=/"
        for (url, extra) in [(closed, [String]()), (failing, ["--fail"])] {
            let arguments = [url, "-s", "-w", "%{http_code} %{size_download}\\n", "-F", "a=b"] + extra
            let curl = try runProgram(try #require(executableOnPath("curl")), arguments)
            let ours = try multipart(arguments + ["--progress", "none"])
            #expect(ours.stdoutText == curl.stdoutText && ours.status == curl.status, "\(url): \(ours.stderr)")
        }
    }

    /// A dropped connection resumes where it stopped when the server announced resumption (104): the form arrives
    /// whole through three requests, each notice names the byte it resumes from; `--no-resume` offers no resumption,
    /// which this server (it takes resumable uploads only) answers 404.
    @Test func aDroppedConnectionResumesWhereItStopped() throws {
        let server = try PeerUploadServer(python: python, script: "resumable_server.py", arguments: [])
        let front = try PeerUploadServer.front(
            python: python, targetPort: server.port, actions: ["cut:1000000", "cut:1000000", "proxy"])
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (form, expected) = try makeForm(folder)
        let url = "http://127.0.0.1:\(front.port)/upload"
        let result = try multipart([url] + form)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try reply(result).parts == expected)
        let notes = result.stderr.split(separator: "\n").filter { $0.contains("resuming from byte") }
        #expect(notes.count == 2, "\(result.stderr)")
        #expect(notes.first?.hasSuffix("(attempt 1 of 10)") == true, "\(notes)")

        let refused = try multipart([url, "--no-resume", "-w", "%{http_code}", "-o", "/dev/null"] + form)
        #expect(refused.stdoutText == "404" && !refused.stderr.contains("resuming"), "\(refused.stderr)")
    }

    /// A server that reads every append and answers 409 ends the send with curl's 55 and a line that says why, once
    /// the appends sent more the server did not keep than the body holds, even with --retry: it drew the body once
    /// a resumption, then again for each retry (a 3 MB form: 85 MB in 60 s with --retry 2).
    @Test func aServerThatRefusesEveryAppendEndsTheSendWith55() throws {
        let server = try PeerUploadServer(python: python, script: "resumable_server.py", arguments: ["--conflicting"])
        defer { withExtendedLifetime(server) {} }  // the server ends when its object goes
        let front = try PeerUploadServer.front(
            python: python, targetPort: server.port, actions: ["cut:1000000", "proxy"])
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (form, _) = try makeForm(folder)
        let result = try multipart(["http://127.0.0.1:\(front.port)/upload", "--retry", "2"] + form)
        #expect(result.status == 55, "\(result.stderr)")
        #expect(result.stderr.contains("the upload was given up: the appends sent"), "\(result.stderr)")
        let notes = result.stderr.split(separator: "\n").filter { $0.contains("resuming from byte") }
        #expect((1...2).contains(notes.count), "\(result.stderr)")
    }

    /// A server that no longer knows the upload (it restarted: the location answers 404) gets it again from the start,
    /// once, with a notice that says why; without --retry.
    @Test func anUploadTheServerForgotIsSentAgain() throws {
        let server = try PeerUploadServer(python: python, script: "resumable_server.py", arguments: ["--forgetful"])
        defer { withExtendedLifetime(server) {} }  // the server ends when its object goes
        let front = try PeerUploadServer.front(
            python: python, targetPort: server.port, actions: ["cut:1000000", "proxy"])
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (form, expected) = try makeForm(folder)
        let result = try multipart(["http://127.0.0.1:\(front.port)/upload"] + form)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try reply(result).parts == expected)
        #expect(
            result.stderr.contains("the server no longer knows the upload (it may have restarted); sending it again"))
        #expect(!result.stderr.contains("resuming from byte"), "\(result.stderr)")
    }

    /// A body over 1 MiB goes with `Expect: 100-continue` and waits for the interim answer, as curl's does: `-v`, `-D`
    /// and `-i` show the `100 Continue` as curl does; with a front that never sends one, both send the body after
    /// `--expect100-timeout`; with one that refuses at once, neither sends a byte of it.
    @Test(.enabled(if: executableOnPath("curl") != nil, "needs curl"))
    func expectContinueIsCurls() throws {
        let curl = try #require(executableOnPath("curl"))
        let server = try PeerUploadServer(python: python)
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let fields = Array(try makeForm(folder).arguments.dropLast(2))  // without --progress none: -s is curl's
        let common = ["-s", "-v", "-i", "-o", folder.url.appendingPathComponent("out").path] + fields
        func heads(_ result: ProgramResult, dump: String) throws -> (
            verbose: [String], dumped: [String], included: [String]
        ) {
            // The answer's own length and date differ: the two bodies and their times do.
            func kept(_ line: some StringProtocol) -> Bool {
                !["date:", "content-length:"].contains {
                    line.dropFirst(line.hasPrefix("< ") ? 2 : 0).lowercased().hasPrefix($0)
                }
            }
            let verbose = result.stderr.replacingOccurrences(of: "\r", with: "").split(separator: "\n")
                .filter { $0.hasPrefix("<") && kept($0) }.map(String.init)
            let dumped = try String(contentsOfFile: dump, encoding: .utf8).components(separatedBy: "\r\n").filter(kept)
            let output = try String(contentsOf: folder.url.appendingPathComponent("out"), encoding: .utf8)
            let included = output.components(separatedBy: "\r\n\r\n").dropLast().joined(separator: "\r\n\r\n")
                .components(separatedBy: "\r\n").filter(kept)
            return (verbose, dumped, included)
        }
        let dump = folder.url.appendingPathComponent("head").path
        let theirs = try runProgram(curl, [server.url.absoluteString, "-D", dump] + common)
        try #require(theirs.status == 0, "\(theirs.stderr)")
        let curlHeads = try heads(theirs, dump: dump)
        let ours = try multipart([server.url.absoluteString, "-D", dump] + common)
        try #require(ours.status == 0, "\(ours.stderr)")
        let ourHeads = try heads(ours, dump: dump)
        #expect(curlHeads.verbose.first == "< HTTP/1.1 100 Continue", "\(curlHeads.verbose)")
        #expect(ourHeads.verbose == curlHeads.verbose)
        #expect(curlHeads.dumped.prefix(2) == ["HTTP/1.1 100 Continue", ""], "\(curlHeads.dumped)")
        #expect(ourHeads.dumped == curlHeads.dumped)
        #expect(ourHeads.included == curlHeads.included)

        for (action, report) in [("continue:never", "waited "), ("refuse:413", "after ")] {
            let front = try PeerUploadServer.front(python: python, targetPort: server.port, actions: [action])
            let arguments =
                ["http://127.0.0.1:\(front.port)/upload", "-s", "-o", "/dev/null", "-w", "%{http_code}"]
                + ["--expect100-timeout", "3"] + fields
            let theirs = try runProgram(curl, arguments)
            let theirReport = try front.nextLine()
            let ours = try multipart(arguments)
            let ourReport = try front.nextLine()
            #expect(ours.stdoutText == theirs.stdoutText && ours.status == theirs.status, "\(action): \(ours.stderr)")
            for line in [theirReport, ourReport] {
                let number = try #require(Int(line.dropFirst(report.count)), "\(action): \(line)")
                if action == "refuse:413" {
                    #expect(line == "after 0", "\(action)")
                } else {
                    // The front's clock starts when it has read the head: on a loaded machine, up to 1 s late.
                    #expect(number >= 2000, "\(action): the body went \(number) ms after the head")
                }
            }
        }
    }

    /// Tests/Peers/connect_proxy.py, logging each tunnel it opens, and the `env` arguments that unset every proxy
    /// variable, so that a test sets only its own.
    struct LoggingProxy {
        let proxy: PeerUploadServer
        let log: String
        static let clean = [
            "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY",
        ].flatMap { ["-u", $0] }

        init(python: String, folder: TemporaryFolder) throws {
            log = folder.url.appendingPathComponent("proxy.log").path
            proxy = try PeerUploadServer(python: python, script: "connect_proxy.py", arguments: [log])
        }

        /// The tunnels opened so far, one `CONNECT host:port [authorization]` line each.
        var tunnels: [String] {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
    }

    /// `-x` and the proxy variables, read as curl reads them: the form goes through the proxy's CONNECT tunnel (the
    /// proxy logs the target and the credentials), `no_proxy` and `--noproxy` go around it, `-x ""` turns the
    /// variables off, and an `http` URL takes neither `HTTPS_PROXY` nor an upper-case `HTTP_PROXY`.
    @Test func theFormGoesThroughAProxyChosenAsCurlChoosesOne() throws {
        let server = try PeerUploadServer(python: python)
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let logging = try LoggingProxy(python: python, folder: folder)
        let proxy = logging.proxy
        func send(_ arguments: [String], _ environment: [String] = []) throws -> ProgramResult {
            let command = [try #require(Peers.multipart), "send", server.url.absoluteString, "-F", "a=b"]
            return try runProgram(
                "/usr/bin/env", LoggingProxy.clean + environment + command + ["--progress", "none"] + arguments)
        }
        func tunnels() -> [String] { logging.tunnels }
        let through = "http://127.0.0.1:\(proxy.port)"
        let credentials = "Basic " + Data("ann:se cret".utf8).base64EncodedString()

        let named = try send(["-x", "ann:se%20cret@127.0.0.1:\(proxy.port)"])
        #expect(named.status == 0, "\(named.stderr)")
        #expect(try reply(named).parts?.map(\.name) == ["a"])
        #expect(tunnels() == ["CONNECT 127.0.0.1:\(server.port) \(credentials)"])
        let fromEnvironment = try send([], ["http_proxy=\(through)"])
        #expect(fromEnvironment.status == 0 && tunnels().count == 2, "\(fromEnvironment.stderr)")
        for (arguments, environment) in [
            ([], ["http_proxy=\(through)", "no_proxy=localhost,127.0.0.1"]),
            (["--noproxy", "*"], ["http_proxy=\(through)"]),
            (["-x", ""], ["http_proxy=\(through)"]), ([], ["HTTPS_PROXY=\(through)"]), ([], ["HTTP_PROXY=\(through)"]),
        ] {
            let around = try send(arguments, environment)
            #expect(around.status == 0, "\(arguments) \(environment): \(around.stderr)")
            #expect(tunnels().count == 2, "\(arguments) \(environment) went through the proxy")
        }
        let unknown = try send(["-x", "ftp://127.0.0.1:21"])
        #expect(unknown.status == 1 && unknown.stderr.contains("only http:// and socks5://"), "\(unknown.stderr)")
    }

    /// After `-L`, each request's proxy is decided by its own URL, as curl decides it: a redirect from a host
    /// `no_proxy` names to one it does not goes through the proxy, and one the other way goes around it (the proxy
    /// was decided once, for the first URL).
    @Test func aRedirectsProxyIsDecidedByItsOwnURL() throws {
        let server = try PeerUploadServer(python: python)
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let logging = try LoggingProxy(python: python, folder: folder)
        func tunnels() -> [String] { logging.tunnels }
        let environment = ["http_proxy=http://127.0.0.1:\(logging.proxy.port)", "no_proxy=127.0.0.1"]
        func send(from: String, to: String) throws -> ProgramResult {
            let url = "http://\(from):\(server.port)/redirect/307?to=http://\(to):\(server.port)/"
            let command = [try #require(Peers.multipart), "send", url, "-F", "a=b", "-L", "--progress", "none"]
            return try runProgram("/usr/bin/env", LoggingProxy.clean + environment + command)
        }
        let into = try send(from: "127.0.0.1", to: "localhost")
        #expect(into.status == 0, "\(into.stderr)")
        #expect(try reply(into).parts?.map(\.name) == ["a"])
        #expect(tunnels() == ["CONNECT localhost:\(server.port)"], "only the redirect's request went through it")
        let out = try send(from: "localhost", to: "127.0.0.1")
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try reply(out).parts?.map(\.name) == ["a"])
        #expect(tunnels().count == 2, "the redirect to 127.0.0.1 went around the proxy: \(tunnels())")
    }

    /// A proxy setting that cannot be read fails only a request that reads it, as with curl: a broken
    /// `https_proxy` leaves an http send alone (it failed the send with status 1 before it started), and fails with
    /// curl's 5 when `-L` follows a redirect to an https URL.
    @Test func aBrokenProxySettingFailsOnlyTheRequestThatReadsIt() throws {
        let server = try PeerUploadServer(python: python)
        let broken = "https_proxy=http://127.0.0.1:99999"
        func send(_ url: String) throws -> ProgramResult {
            let command = [try #require(Peers.multipart), "send", url, "-F", "a=b", "-L", "--progress", "none"]
            return try runProgram("/usr/bin/env", LoggingProxy.clean + [broken] + command)
        }
        let plain = try send(server.url.absoluteString)
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(try reply(plain).parts?.map(\.name) == ["a"])
        let redirected = try send("http://127.0.0.1:\(server.port)/redirect/307?to=https://127.0.0.1:\(server.port)/")
        #expect(redirected.status == 5, "\(redirected.stderr)")
        #expect(redirected.stderr.contains("the port is not a number from 1 to 65535"), "\(redirected.stderr)")
    }

    /// `--retry-all-errors` sends again after an answer that no plain `--retry` repeats (418 here).
    @Test func retryAllErrorsRetriesARefusal() throws {
        let server = try PeerUploadServer(python: python)
        var fronts: [PeerUploadServer] = []  // each send gets a front of its own: its actions are its own
        func front() throws -> String {
            let front = try PeerUploadServer.front(
                python: python, targetPort: server.port, actions: ["status:418", "proxy"])
            fronts.append(front)
            return "http://127.0.0.1:\(front.port)/upload"
        }
        let plain = try multipart([try front(), "--retry", "1", "--retry-delay", "0.01", "-F", "a=b", "--fail"])
        #expect(plain.status == 22, "418 is not transient: \(plain.stderr)")
        let every = try multipart(
            [try front(), "--retry", "1", "--retry-delay", "0.01", "--retry-all-errors", "-F", "a=b", "--fail"])
        #expect(every.status == 0, "\(every.stderr)")
        #expect(try reply(every).parts?.map(\.name) == ["a"])
        #expect(every.stderr.contains("HTTP 418; attempt 2 of 2"), "\(every.stderr)")
        #expect(fronts.count == 2)
    }

    /// `-b` sends a cookie string as it is, or the cookies of a Netscape file that match the URL (not another
    /// domain's or path's, nor an expired one; a secure one goes to a loopback host over http, as curl sends it), in
    /// curl's order; `-c` writes them with those the answer set, and curl reads both files into the same header.
    @Test func cookiesGoAndComeAsCurlsDo() throws {
        let server = try PeerUploadServer(python: python)
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = server.url.absoluteString
        let plain = try multipart([url, "-b", "a=1; b=2", "-F", "x=y", "--progress", "none"])
        #expect(try reply(plain).headers?["cookie"] == "a=1; b=2")

        let lines = [
            "# Netscape HTTP Cookie File", "127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\tone",
            "#HttpOnly_127.0.0.1\tFALSE\t/upload\tFALSE\t4102444800\tlasting\ttwo",
            "127.0.0.1\tFALSE\t/other\tFALSE\t0\telsewhere\tno", "example.com\tTRUE\t/\tFALSE\t0\tforeign\tno",
            "127.0.0.1\tFALSE\t/\tTRUE\t0\tsecure\tno", "127.0.0.1\tFALSE\t/\tFALSE\t1\texpired\tno",
        ]
        let file = try folder.file("cookies.txt", contents: Array(lines.joined(separator: "\n").utf8))
        let jar = folder.url.appendingPathComponent("jar.txt").path
        let fromFile = try multipart([
            url, "-b", file.path, "-c", jar, "-H", "X-Set-Cookie: fresh=3; Path=/; Max-Age=3600", "-H",
            "X-Set-Cookie: session=changed", "-F", "x=y", "--progress", "none",
        ])
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        #expect(try reply(fromFile).headers?["cookie"] == "lasting=two; session=one; secure=no")
        let written = try String(contentsOfFile: jar, encoding: .utf8)
        #expect(written.hasPrefix("# Netscape HTTP Cookie File\n"))
        #expect(written.contains("#HttpOnly_127.0.0.1\tFALSE\t/upload\tFALSE\t4102444800\tlasting\ttwo\n"))
        #expect(written.contains("127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\tchanged\n"))
        #expect(written.contains("\tfresh\t3\n") && !written.contains("\texpired\t"), "\(written)")

        guard let curl = executableOnPath("curl") else { return }
        for cookies in [file.path, jar] {
            let theirs = try runProgram(curl, ["-s", "-b", cookies, "-F", "x=y", url])
            let ours = try multipart([url, "-b", cookies, "-F", "x=y", "--progress", "none"])
            let sent = try JSONDecoder().decode(PeerReply.self, from: Data(theirs.stdout)).headers?["cookie"]
            #expect(try reply(ours).headers?["cookie"] == sent, "\(cookies)")
        }
    }

    /// `-c` keeps only the cookies the answering host may set, as curl does: never one for a domain the host is
    /// not inside (`Domain=victim.example` from 127.0.0.1), a bare top-level domain, or a domain of an IP address;
    /// `-b` never sends a domain cookie to an address it suffix-matches (`.0.0.1`); and after `-L` each request's
    /// cookies are its own path's (a `Path=/redirect` cookie does not follow the redirect to `/ok`).
    @Test func cookiesGoOnlyWhereTheirDomainAndPathAllow() throws {
        let server = try PeerUploadServer(python: python)
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = server.url.absoluteString
        let set = [
            "evil=1; Domain=victim.example", "tld=1; Domain=com", "ip=1; Domain=.0.0.1", "dot=1; Domain=0.0.1",
            "own=1; Domain=127.0.0.1", "plain=1",
        ]
        let jar = folder.url.appendingPathComponent("jar.txt").path
        let setting = try multipart(
            [url, "-c", jar, "-F", "x=y", "--progress", "none"] + set.flatMap { ["-H", "X-Set-Cookie: \($0)"] })
        #expect(setting.status == 0, "\(setting.stderr)")
        let written = try String(contentsOfFile: jar, encoding: .utf8)
        func names(_ file: String) -> Set<String> {
            Set(
                file.split(separator: "\n").filter { !$0.hasPrefix("#") || $0.hasPrefix("#HttpOnly_") }.compactMap {
                    $0.split(separator: "\t").dropFirst(5).first.map(String.init)
                })
        }
        #expect(names(written) == ["own", "plain"], "\(written)")
        #expect(written.contains("127.0.0.1\tFALSE\t/\tFALSE\t0\town\t1\n"), "an address's cookie is its host's only")

        let lines = [
            "127.0.0.1\tFALSE\t/\tFALSE\t0\troot\tyes", "127.0.0.1\tFALSE\t/redirect\tFALSE\t0\tonRedirect\tyes",
            ".0.0.1\tTRUE\t/\tFALSE\t0\tsuffix\tno",
        ]
        let file = try folder.file("cookies.txt", contents: Array(lines.joined(separator: "\n").utf8))
        let redirected = try multipart([
            "\(url)redirect/307?to=\(url)ok", "-L", "-b", file.path, "-F", "x=y", "--progress", "none",
        ])
        #expect(redirected.status == 0, "\(redirected.stderr)")
        #expect(try reply(redirected).headers?["cookie"] == "root=yes", "the cookies sent to /ok")

        guard let curl = executableOnPath("curl") else { return }
        let curlJar = folder.url.appendingPathComponent("curl-jar.txt").path
        _ = try runProgram(
            curl, ["-s", "-c", curlJar, "-F", "x=y", url] + set.flatMap { ["-H", "X-Set-Cookie: \($0)"] })
        #expect(names(try String(contentsOfFile: curlJar, encoding: .utf8)) == names(written), "curl's jar")
        let theirs = try runProgram(curl, ["-s", "-L", "-b", file.path, "-F", "x=y", "\(url)redirect/307?to=\(url)ok"])
        let sent = try JSONDecoder().decode(PeerReply.self, from: Data(theirs.stdout)).headers?["cookie"]
        #expect(sent == "root=yes", "curl sends to /ok")
    }

    /// `--fail-with-body` writes the answer of a refusal and exits 22, where `--fail` writes nothing.
    @Test func failWithBodyWritesTheRefusal() throws {
        let server = try PeerUploadServer(python: python)
        let front = try PeerUploadServer.front(python: python, targetPort: server.port, actions: ["status:418"])
        let url = "http://127.0.0.1:\(front.port)/upload"
        let withBody = try multipart([url, "--fail-with-body", "-i", "-F", "a=b", "--progress", "none"])
        #expect(withBody.status == 22 && withBody.stdoutText.hasPrefix("HTTP/1.1 418"), "\(withBody.stdoutText)")
        let failed = try multipart([url, "--fail", "-F", "a=b", "--progress", "none"])
        #expect(failed.status == 22 && failed.stdout.isEmpty)
        let both = try multipart([url, "--fail", "--fail-with-body", "-F", "a=b"])
        #expect(both.status == 1 && both.stderr.contains("exclude each other"), "\(both.stderr)")
    }

    /// A refused connection is retried, and the notice says why in words ("connection refused (errno 111)").
    @Test func aRefusedConnectionIsRetriedWithANoticeAPersonReads() throws {
        let port = try PeerUploadServer.freePort(python: python)  // nothing listens there
        let result = try multipart(
            ["http://127.0.0.1:\(port)/upload", "--retry", "1", "--retry-delay", "0.05", "-F", "a=b"])
        #expect(result.status == 7, "\(result.stderr)")
        #expect(
            result.stderr.contains("connection refused (errno \(ECONNREFUSED)); attempt 2 of 2 in 50 ms"),
            "\(result.stderr)")
        #expect(!result.stderr.contains("Error"), "no type names: \(result.stderr)")
    }

    /// A part from standard input can be read once: it is sent once, and the tool says so when asked to retry.
    @Test func standardInputIsNeverSentTwice() throws {
        let server = try PeerUploadServer(python: python)
        let front = try PeerUploadServer.front(python: python, targetPort: server.port, actions: ["drop", "proxy"])
        let result = try runProgram(
            try #require(Peers.multipart),
            ["send", "http://127.0.0.1:\(front.port)/upload", "-F", "log=@-", "--retry", "2", "--progress", "none"],
            input: Array("from standard input".utf8))
        #expect(result.status == 52 || result.status == 56, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("multipart: a part reads standard input, which can be read once"))
        #expect(!result.stderr.contains("attempt 2"), "\(result.stderr)")
    }

    @Test func failTurnsARefusalIntoStatus22() throws {
        let server = try PeerUploadServer(python: python)
        let front = try PeerUploadServer.front(python: python, targetPort: server.port, actions: ["status:413"])
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (form, _) = try makeForm(folder)
        let url = "http://127.0.0.1:\(front.port)/upload"
        let failed = try multipart([url, "--fail", "--retry", "3"] + form)
        #expect(failed.status == 22)
        #expect(failed.stderr.hasPrefix("multipart: the server answered 413 "))
        #expect(failed.stderr.split(separator: "\n").count == 1)
        #expect(failed.stdout.isEmpty)
        #expect(try multipart([url] + form).status == 0, "without --fail an HTTP status is an answer, as curl's")
    }

    /// One line on standard error and curl's exit status for each way a transfer fails.
    @Test func failuresSayWhatWentWrongInOneLine() throws {
        let server = try PeerUploadServer(python: python)
        let front = try PeerUploadServer.front(python: python, targetPort: server.port, actions: ["hang"])
        let port = try PeerUploadServer.freePort(python: python)
        let unresolvable = String(repeating: "a", count: 64) + ".invalid"
        let cases: [(arguments: [String], status: Int32, says: String)] = [
            (["http://127.0.0.1:\(port)/"], 7, "could not connect to 127.0.0.1:\(port): connection refused"),
            // A name that fails before any resolver is asked (a label of 64 characters, past DNS's 63): no test
            // sends a DNS query.
            (["http://\(unresolvable)/"], 6, "could not resolve host \(unresolvable)"),
            (["http://127.0.0.1:\(front.port)/", "--max-time", "1"], 28, "timed out after 1.0 s (--max-time)"),
            (["http://127.0.0.1:\(port)/", "-F", "f=@/no/such/file"], 26, "file not found: /no/such/file"),
            (["ftp://127.0.0.1/"], 1, "is not an http or https URL"),
            (["http://127.0.0.1/", "-H", "no colon"], 1, "expected 'Name: value'"),
            (["http://127.0.0.1/", "--limit-rate", "fast"], 1, "--limit-rate \"fast\""),
            (["http://127.0.0.1/", "--expect100-timeout=-1"], 1, "must be positive numbers"),
            // Seconds past what a Duration or NIO's TimeAmount holds are a long time, not a crash.
            (["http://127.0.0.1:\(port)/", "--max-time", "1e300", "--connect-timeout", "1e300"], 7, "refused"),
            (["http://127.0.0.1:\(port)/", "--retry-delay", "1e300", "--expect100-timeout", "1e300"], 7, "refused"),
        ]
        for (arguments, status, says) in cases {
            let result = try multipart(arguments + ["-F", "a=1", "--progress", "none"])
            #expect(result.status == status, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(says), "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
        }
    }

    @Test(.enabled(if: executableOnPath("openssl") != nil, "needs openssl to make a certificate"))
    func httpsWithTheServersCertificateAndNotWithout() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let cert = folder.url.appendingPathComponent("cert.pem").path
        let key = folder.url.appendingPathComponent("key.pem").path
        let made = try runProgram(
            try #require(executableOnPath("openssl")),
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
                "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            ])
        try #require(made.status == 0, "\(made.stderr)")
        let server = try PeerUploadServer(python: python, script: "upload_server.py", arguments: ["--tls", cert, key])
        let url = "https://127.0.0.1:\(server.port)/upload"
        let (form, expected) = try makeForm(folder)
        let trusted = try multipart([url, "--cacert", cert] + form)
        #expect(trusted.status == 0, "\(trusted.stderr)")
        #expect(try reply(trusted).parts == expected)
        let untrusted = try multipart([url] + form)
        #expect(untrusted.status == 60, "\(untrusted.stderr)")
        #expect(untrusted.stderr.contains("is not trusted (give its CA with --cacert FILE, or --insecure)"))
        let insecure = try multipart([url, "--insecure"] + form)
        #expect(insecure.status == 0, "\(insecure.stderr)")
        // -L follows no redirect from https to http (curl would, sending the form in clear): the redirect is the
        // answer, and standard error says why.
        let plain = try PeerUploadServer(python: python)
        let redirect = "https://127.0.0.1:\(server.port)/redirect/307?to=\(plain.url.absoluteString)"
        let notFollowed = try multipart([redirect, "--cacert", cert, "-L", "-o", "/dev/null"] + form)
        #expect(notFollowed.status == 0, "\(notFollowed.stderr)")
        #expect(
            notFollowed.stderr.contains("not following the redirect from https to \(plain.url.absoluteString)"),
            "\(notFollowed.stderr)")
    }

    /// The progress bar on a real terminal: tmux runs the upload in a 100-column pane (standard error a TTY, so the
    /// bar is the default) at 2 MiB/s, and the pane is read while it runs and after (Tests/Peers/tmux_pane.py).
    @Test(.enabled(if: executableOnPath("tmux") != nil, "needs tmux for a terminal (.ci/run installs it)"))
    func theBarRedrawsInPlaceOnATerminalAndEndsItsLine() throws {
        let tmux = try #require(executableOnPath("tmux"))
        let server = try PeerUploadServer(python: python)
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("photo.bin", contents: [UInt8](repeating: 7, count: 6 << 20))
        let shown = try runProgram(
            python,
            [
                Repository.peerScript("tmux_pane.py"), tmux, "ETA", try #require(Peers.multipart), "send",
                server.url.absoluteString, "-F", "caption=Sunset", "-F", "photo=@\(file.path)", "--limit-rate", "2M",
            ])
        struct Pane: Decodable {
            var during: [String]
            var after: [String]
        }
        let pane = try JSONDecoder().decode(Pane.self, from: Data(shown.stdout))
        let (during, after) = (pane.during, pane.after)
        let bars = during.filter { $0.contains("MiB/s") }
        #expect(bars.count == 1, "one bar, redrawn in place: \(during)")
        let bar = bars.first ?? ""
        #expect(bar.contains("part 2/2 photo.bin") && bar.contains(" [=") && bar.contains("/6.00 MiB "), "\(bar)")
        #expect(bar.count <= 100, "the bar fits the terminal: \(bar)")
        let done = after.filter { $0.contains("MiB/s") }
        #expect(done.count == 1, "\(after)")
        #expect(done.first?.contains("6.00 MiB/6.00 MiB 100%") == true, "\(after)")
        let index = after.firstIndex { $0.contains("MiB/s") } ?? 0
        #expect(after.indices.contains(index + 1) && after[index + 1].hasPrefix("{\"method\": \"POST\""), "\(after)")
        #expect(after.contains { $0.hasSuffix("EXIT=0") }, "\(after)")
    }

}
