import ExampleTestSupport
import Foundation
import Testing

/// The server over HTTP/2 (`.guardedHTTP2`): with a test certificate, curl uploads over `h2` and over `http/1.1` on
/// the same port as ALPN picks; without TLS (`--http2`), HTTP/2 with prior knowledge and HTTP/1.1 share the port;
/// and HTTP/2's own attacks (`Scripts/h2_attacks.py`, frames written by hand with Python's `h2` parts) are each
/// answered within a bound of frames and of time, the server serving a normal upload after each.
@Suite(.serialized, .timeLimit(.minutes(5))) struct HTTP2Tests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/h2_attacks.py").path

    /// The test certificate (ExampleTestSupport), made at test time with openssl.
    static var certificate: (cert: String, key: String)? { testCertificate }

    /// The server's timeouts, small so that each attack's answer comes in seconds.
    static let quick = ["--header-timeout", "2", "--idle-timeout", "3", "--write-timeout", "3"]

    static var curlAndCertificate: Bool { onPath("curl") != nil && certificate != nil }

    /// Runs an attack against `server` (on its h2c port) and returns its JSON report.
    static func attack(_ name: String, on server: RunningServer, _ options: [String] = []) async throws -> [String:
        Any]
    {
        let interpreter = try #require(python(with: "h2"))
        let result = try await run(interpreter, [script, String(server.port), name] + options, seconds: 120)
        try #require(result.status == 0, "\(name): \(result.errors)")
        return try #require(try JSONSerialization.jsonObject(with: result.output) as? [String: Any], "\(result.text)")
    }

    /// curl's upload of `file`: the answer's body, and the protocol and status curl saw.
    static func curl(_ arguments: [String], file: URL, to url: String) async throws -> (
        body: String, version: String, status: Int
    ) {
        let curl = try #require(onPath("curl"))
        let result = try await run(
            curl,
            ["-sS", "-F", "note=hi", "-F", "file=@\(file.path)", "-w", "\n%{http_version} %{http_code}"]
                + arguments + [url])
        try #require(result.status == 0, "curl: \(result.errors)")
        let lines = result.text.split(separator: "\n")
        let last = try #require(lines.last).split(separator: " ")
        return (lines.dropLast().joined(separator: "\n"), String(last[0]), Int(last[1]) ?? 0)
    }

    static func file(of bytes: Int) throws -> (url: URL, sha256: String) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("h2-upload-\(UUID().uuidString)")
        var generator = SystemRandomNumberGenerator()
        try Data((0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: url)
        let digest = try runWaiting(try #require(onPath("sha256sum")), [url.path])
        return (url, String(digest.text.prefix(64)))
    }

    @Test(.enabled(if: curlAndCertificate, "needs curl and openssl (.ci/run installs them)"), .timeLimit(.minutes(2)))
    func curlUploadsOverHTTP2AndHTTP1OnOneTLSPort() async throws {
        let certificate = try #require(Self.certificate)
        let server = try RunningServer(arguments: ["--tls-certificate", certificate.cert, "--tls-key", certificate.key])
        defer { server.stop() }
        let (file, sha256) = try Self.file(of: 3 << 20)
        defer { try? FileManager.default.removeItem(at: file) }
        let url = "https://localhost:\(server.port)/upload"
        for (flag, version) in [("--http2", "2"), ("--http1.1", "1.1")] {
            // Expect: 100-continue asked for by hand: over HTTP/2 too, the server answers it before the body.
            let answer = try await Self.curl(
                ["--cacert", certificate.cert, flag, "-H", "Expect: 100-continue"], file: file, to: url)
            #expect(answer.version == version && answer.status == 200, "\(flag): \(answer)")
            #expect(answer.body.contains(sha256), "\(flag): \(answer.body)")
            #expect(answer.body.contains(#""value":"hi""#), "\(flag): \(answer.body)")
        }
        #expect(try server.spooledFiles() == [])
    }

    /// `multipart send` speaks HTTP/2 to it by ALPN (its default, as curl's), HTTP/1.1 with `--http1.1`, and says
    /// plainly that `--http2-prior-knowledge` is not one it can speak.
    @Test(
        .enabled(
            if: RunningServer.built("multipart") != nil, "the multipart tool was not built (swift test at the root)"),
        .enabled(if: certificate != nil, "needs openssl to make a certificate (.ci/run installs it)"),
        .timeLimit(.minutes(2)))
    func sendPicksItsProtocolAsCurlDoes() async throws {
        let (cli, certificate) = (try #require(RunningServer.built("multipart")), try #require(Self.certificate))
        let server = try RunningServer(arguments: ["--tls-certificate", certificate.cert, "--tls-key", certificate.key])
        defer { server.stop() }
        let url = "https://localhost:\(server.port)/upload"
        for (flags, version) in [([], "HTTP/2.0"), (["--http2"], "HTTP/2.0"), (["--http1.1"], "HTTP/1.1")] {
            let sent = try await run(cli, ["send", "-i", "--cacert", certificate.cert, "-F", "a=b"] + flags + [url])
            #expect(sent.status == 0 && sent.text.contains("\(version) 200"), "\(flags): \(sent.text) \(sent.errors)")
        }
        let refused = try await run(cli, ["send", "--http2-prior-knowledge", "-F", "a=b", "http://127.0.0.1:1/"])
        #expect(refused.status == 1 && refused.errors.contains("--http2-prior-knowledge is not supported"))
    }

    /// A certificate or key that does not load stops the server at start, naming the option and the file, before it
    /// makes a spool folder.
    @Test(.enabled(if: certificate != nil, "needs openssl to make a certificate (.ci/run installs it)"))
    func aCertificateThatDoesNotLoadStopsTheServerByName() async throws {
        let (binary, certificate) = (try #require(RunningServer.binary), try #require(Self.certificate))
        let outbox = try Outbox()
        defer { outbox.remove() }
        let spool = outbox.url.appendingPathComponent("spool").path
        for (tls, said) in [
            (
                ["--tls-certificate", "/nonexistent.pem", "--tls-key", certificate.key],
                "--tls-certificate /nonexistent.pem"
            ),
            (
                ["--tls-certificate", certificate.key, "--tls-key", certificate.key],
                "--tls-certificate \(certificate.key)"
            ),
            (["--tls-certificate", certificate.cert, "--tls-key", certificate.cert], "--tls-key \(certificate.cert)"),
        ] {
            let result = try await run(binary, ["--port", "0", "--spool-dir", spool] + tls)
            #expect(result.status == 1 && result.errors.contains(said), "\(tls): \(result.errors)")
        }
        #expect(!FileManager.default.fileExists(atPath: spool), "a spool folder was made")
    }

    @Test(.enabled(if: onPath("curl") != nil, "needs curl (.ci/run installs it)"), .timeLimit(.minutes(2)))
    func priorKnowledgeAndHTTP1ShareAPlainPort() async throws {
        let server = try RunningServer(arguments: ["--http2"])
        defer { server.stop() }
        let (file, sha256) = try Self.file(of: 1 << 20)
        defer { try? FileManager.default.removeItem(at: file) }
        let url = "http://127.0.0.1:\(server.port)/upload"
        for (flag, version) in [("--http2-prior-knowledge", "2"), ("--http1.1", "1.1")] {
            let answer = try await Self.curl([flag], file: file, to: url)
            #expect(answer.version == version && answer.status == 200, "\(flag): \(answer)")
            #expect(answer.body.contains(sha256), "\(flag): \(answer.body)")
        }
    }

    /// Under load: h2load (nghttp2's) sends 2,000 forms of 4 KiB over 16 HTTP/2 connections, 4 streams at once on
    /// each; every form is answered 200, and the spool folder and the descriptors are back to idle after.
    @Test(
        .enabled(if: onPath("h2load") != nil, "needs h2load (.ci/run installs nghttp2-client)"), .timeLimit(.minutes(2))
    )
    func h2loadsFormsAreEachAnswered() async throws {
        let server = try RunningServer(arguments: ["--http2"])
        defer { server.stop() }
        let before = try #require(server.openDescriptors())
        let outbox = try Outbox()
        defer { outbox.remove() }
        let boundary = "H2LoadForm"
        let form =
            Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nA small form\r\n".utf8)
            + Array(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f.bin\"\r\n\r\n".utf8)
            + randomBytes(4096, seed: 7) + Array("\r\n--\(boundary)--\r\n".utf8)
        let body = try outbox.file("form.bin", form)
        let result = try await run(
            try #require(onPath("h2load")),
            [
                "-n", "2000", "-c", "16", "-m", "4", "-d", body, "-H",
                "content-type: multipart/form-data; boundary=\(boundary)", "http://127.0.0.1:\(server.port)/upload",
            ])
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.text.contains("2000 succeeded"), "\(result.text)")
        #expect(result.text.contains("status codes: 2000 2xx"), "\(result.text)")
        #expect(try server.spooledFiles() == [])
        let after = await server.openDescriptors(settlingAt: before + 2)
        #expect((after ?? .max) <= before + 2, "descriptors \(before) → \(after ?? -1)")
    }

    /// Resumable uploads over HTTP/2: a form offered resumption gets its `104` with a location on its stream, and
    /// after its connection drops mid-body, HEAD on a new connection says how much came and PATCH sends the rest;
    /// the file's SHA-256 is the one sent.
    @Test(.enabled(if: python(with: "h2") != nil, "needs Python's h2 (.ci/run installs it)"), .timeLimit(.minutes(2)))
    func anUploadResumesOverHTTP2() async throws {
        let server = try RunningServer(arguments: ["--http2"])
        defer { server.stop() }
        let report = try await Self.attack("resume", on: server, ["--hold", "20"])
        #expect(report["announced"] as? Bool == true, "\(report)")
        #expect((report["offset"] as? Int ?? 0) > 0, "\(report)")
        #expect(report["status"] as? Int == 200, "\(report)")
        #expect(report["sha256"] as? String == report["expected"] as? String, "\(report)")
        #expect(try server.spooledFiles() == [])
    }

    /// Each flood is answered with a GOAWAY (`ENHANCE_YOUR_CALM`, 11) and a close, within a bound of frames far
    /// below what the client sent, as nginx 1.25 and Go answer them, over h2c and over TLS; an HPACK bomb's header
    /// block is a `COMPRESSION_ERROR` (9). Of rapid reset's streams, fewer than the bound of resets are begun.
    @Test(
        .enabled(if: python(with: "h2") != nil, "needs Python's h2 (.ci/run installs it)"), .timeLimit(.minutes(2)),
        arguments: [
            ("rapid-reset", 11), ("continuation", 11), ("settings", 11), ("ping", 11), ("empty-data", 11),
            ("hpack-bomb", 9),
        ], [false, true])
    func floodsAreAnsweredWithAGoAwayAndAClose(_ attack: (scenario: String, code: Int), tls: Bool) async throws {
        let (scenario, code) = attack
        // h2c with prior knowledge, or h2 by ALPN over TLS (the test certificate).
        let certificate = try #require(tls ? Self.certificate : ("", ""))
        let transport = tls ? ["--tls-certificate", certificate.cert, "--tls-key", certificate.key] : ["--http2"]
        let server = try RunningServer(arguments: transport + Self.quick)
        defer { server.stop() }
        let before = try #require(server.openDescriptors())
        let options = ["--count", "5000", "--hold", "10"] + (tls ? ["--tls"] : [])
        let report = try await Self.attack(scenario, on: server, options)
        #expect(report["goaway"] as? Int == code, "\(report)")
        #expect(report["closed"] as? Bool == true, "\(report)")
        // Closed at once (the linger of 500 ms at most), not by a deadline of seconds.
        #expect((report["seconds"] as? Double ?? 99) < 1.5, "\(report)")
        if scenario == "continuation" {
            #expect((report["sent"] as? Int ?? .max) < 50, "the header block's frames before the close: \(report)")
        }
        #expect((report["served"] as? Int ?? 0) < 200, "\(report)")
        #expect(try await Self.attack("upload", on: server, tls ? ["--tls"] : [])["status"] as? Int == 200)
        #expect(try server.spooledFiles() == [])
        let after = await server.openDescriptors(settlingAt: before + 2)
        #expect((after ?? .max) <= before + 2, "descriptors \(before) → \(after ?? -1)")
    }

    /// A stream's own guards: one that never sends its body is reset at the idle timeout (3 s), one whose client
    /// opens no window is reset at the write timeout (3 s), a refusal takes no more of the body than a window (1 MiB); the
    /// connection, once idle, gets a GOAWAY (`NO_ERROR`) at the header deadline (2 s), and one whose first bytes do
    /// not yet tell its protocol is closed then too; more streams than
    /// SETTINGS_MAX_CONCURRENT_STREAMS end the connection.
    @Test(.enabled(if: python(with: "h2") != nil, "needs Python's h2 (.ci/run installs it)"), .timeLimit(.minutes(2)))
    func eachStreamHasTheGuardsOfAConnection() async throws {
        let server = try RunningServer(arguments: ["--http2"] + Self.quick)
        defer { server.stop() }
        let before = try #require(server.openDescriptors())

        let neverBody = try await Self.attack("never-body", on: server, ["--count", "4", "--hold", "10"])
        let streams = try #require(neverBody["streams"] as? [[String: Any]], "\(neverBody)")
        #expect(streams.count == 4 && streams.allSatisfy { $0["reset"] as? Int == 8 }, "\(neverBody)")
        #expect(streams.allSatisfy { ($0["at"] as? Double ?? 0) >= 2.5 }, "reset before the idle timeout: \(neverBody)")

        let zeroWindow = try await Self.attack("zero-window", on: server, ["--count", "4", "--hold", "10"])
        #expect(zeroWindow["reset"] as? Int == 4, "\(zeroWindow)")
        #expect(zeroWindow["goaway"] as? Int == 0 && zeroWindow["closed"] as? Bool == true, "\(zeroWindow)")

        let refused = try await Self.attack("refused", on: server, ["--hold", "10"])
        #expect(refused["status"] as? Int == 415, "\(refused)")
        #expect((refused["bytesTaken"] as? Int ?? .max) <= 1 << 20, "at most a stream's window: \(refused)")

        let idle = try await Self.attack("idle", on: server, ["--hold", "10"])
        #expect(idle["goaway"] as? Int == 0 && idle["closed"] as? Bool == true, "\(idle)")
        #expect((idle["seconds"] as? Double ?? 0) >= 1.5, "closed before the header deadline: \(idle)")

        // Before its protocol is known: half of HTTP/2's preface, then nothing, closed at the header deadline.
        let undecided = try await Self.attack("undecided", on: server, ["--hold", "10"])
        #expect(undecided["closed"] as? Bool == true, "\(undecided)")
        #expect((undecided["seconds"] as? Double ?? 0) >= 1.5, "closed before the header deadline: \(undecided)")

        let many = try await Self.attack("many-streams", on: server, ["--count", "300", "--hold", "4"])
        #expect(many["maxConcurrentStreams"] as? Int == 100, "\(many)")
        #expect(many["goaway"] as? Int == 1 && many["closed"] as? Bool == true, "\(many)")

        #expect(try await Self.attack("upload", on: server)["status"] as? Int == 200)
        #expect(try server.spooledFiles() == [])
        let after = await server.openDescriptors(settlingAt: before + 2)
        #expect((after ?? .max) <= before + 2, "descriptors \(before) → \(after ?? -1)")
    }

    /// One connection's uploads take no more slots than its address's share (`--max-uploads-per-peer`), however many
    /// streams it may open: its twelve uploads at once get five slots, the other seven a 429 at once, and the five
    /// finish whole.
    @Test(.enabled(if: python(with: "h2") != nil, "needs Python's h2 (.ci/run installs it)"), .timeLimit(.minutes(2)))
    func oneConnectionsUploadsTakeItsAddressShare() async throws {
        let server = try RunningServer(arguments: ["--http2", "--max-uploads-per-peer", "5"] + Self.quick)
        defer { server.stop() }
        let many = try await Self.attack("many-uploads", on: server, ["--count", "12", "--hold", "10"])
        #expect(many["refusedAtOnce"] as? [String: Int] == ["429": 7], "\(many)")
        #expect(many["taken"] as? Int == 5 && many["finished"] as? [String: Int] == ["200": 5], "\(many)")
        #expect(many["goaway"] is NSNull, "the connection goes on: \(many)")
        #expect(try server.spooledFiles() == [])
    }

    /// A disk slower than the link (Tests/Faults/eio_fs.py at 2 MB/s) holds an upload's stream to its window: the
    /// client gets to send no more than the window (1 MiB) and the reads in hand past what reached the disk, and the
    /// server's memory stays put, however fast the client could send the rest of its 64 MiB.
    @Test(
        .enabled(
            if: FaultHarnessTests.canMountFUSE && python(with: "h2") != nil,
            "needs root, FUSE (apt fuse, pip fusepy: Tests/Faults/eio_fs.py) and Python's h2 (.ci/run installs them)"),
        .timeLimit(.minutes(2)))
    func aSlowDiskHoldsAStreamToItsWindow() async throws {
        let disk = try SlowDisk(bandwidth: 2_000_000)
        defer { disk.unmount() }
        let server = try RunningServer(arguments: ["--http2", "--spool-dir", disk.mountPoint])
        defer { server.stop() }
        let before = try #require(server.residentKiB())
        let slow = try await Self.attack("slow-store", on: server, ["--hold", "6", "--spool", disk.backing])
        let sent = try #require(slow["sent"] as? Int, "\(slow)")
        let spooled = try #require(slow["spooled"] as? Int, "\(slow)")
        #expect(spooled > 0 && sent < 32 << 20, "the disk was not slower than the link: \(slow)")
        // Ahead of the disk: the stream's window (1 MiB), the spooler's batch in hand (1 MiB, gathered until it
        // reaches that, so up to one DATA frame, 16 KiB, past it), the write the file system is taking (FUSE's
        // largest, 128 KiB, not yet in the backing file) and the form's own lines. Under six busy loops it was 2 MiB
        // and 128 KiB less a byte: the write in the file system, caught mid-way; in CI 12 KiB past that: the batch's
        // last frame.
        #expect(
            sent - spooled <= (2 << 20) + (16 << 10) + (128 << 10) + 4096,
            "more than a window and the reads in hand ahead of the disk: \(slow)")
        let grown = (server.residentKiB() ?? .max) - before
        #expect(grown < 24 << 10, "the server's memory grew \(grown) KiB: \(slow)")
    }
}

/// A folder on Tests/Faults/eio_fs.py (FUSE) whose writes go at `bandwidth` bytes a second, over a backing folder
/// the test reads directly; mounted at init, unmounted (and both removed) by ``unmount()``.
private final class SlowDisk {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("slow-disk-\(UUID().uuidString)")
    var backing: String { root.appendingPathComponent("backing").path }
    var mountPoint: String { root.appendingPathComponent("mount").path }
    private let process = Process()
    private let input = Pipe()

    init(bandwidth: Int) throws {
        for folder in [backing, mountPoint] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: try #require(onPath("python3")))
        process.arguments = [
            FaultHarness.folder.appendingPathComponent("eio_fs.py").path, backing, mountPoint, "--rate", "0",
            "--bandwidth", String(bandwidth),
        ]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let line = String(decoding: try firstLine(of: process, from: output, within: 30), as: UTF8.self)
        guard line.hasPrefix("mounted") else {
            unmount()
            throw Failure(message: "Tests/Faults/eio_fs.py did not mount: \(line)")
        }
    }

    struct Failure: Error { let message: String }

    /// Closes the file system's standard input, which unmounts it, waits for it, and removes both folders.
    func unmount() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: root)
    }
}
