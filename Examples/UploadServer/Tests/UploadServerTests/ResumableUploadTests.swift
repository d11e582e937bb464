import AsyncHTTPClient
import ExampleTestSupport
import Foundation
import NIOCore
import StreamingMultipart
import StreamingMultipartAsyncHTTPClient
import Testing

/// Resumable uploads (draft-ietf-httpbis-resumable-upload) against the example server, which offers them on
/// `POST /upload`: a 256 MiB form cut ten times by Tests/Peers/front.py completes through `multipart send` and
/// through the AsyncHTTPClient upload, into the spool folder and into S3, with every file's SHA-256 right and under
/// 1.1 times the body sent in all. One at a time: each moves 256 MiB through a debug build. `ResumableClientTests`,
/// beside them, has the clients that misbehave.
@Suite(
    .serialized, .enabled(if: RunningServer.binary != nil, "the UploadServer binary was not built"),
    .enabled(if: onPath("python3") != nil, "needs python3 for Tests/Peers/front.py"),
    .timeLimit(.minutes(5))
)
struct ResumableUploadTests {
    /// The `multipart` tool the repository's `swift test` built into the same build folder (`.ci/run` builds it
    /// first; `swift test --scratch-path ../../.build` finds it).
    static let cli = RunningServer.built("multipart")

    /// Two text fields and two files of random bytes, 192 and 64 MiB: 256 MiB and a little more.
    struct BigForm {
        let fields = [("caption", "Cut ten times"), ("notes", "the field after the files")]
        let files: [(name: String, path: String, sha256: String)]

        init(_ outbox: Outbox) async throws {
            var files: [(String, String, String)] = []
            for (name, megabytes) in [("first", 192), ("second", 64)] {
                let path = outbox.url.appendingPathComponent("\(name).bin").path
                let made = try await run("/bin/sh", ["-c", "head -c \(megabytes << 20) /dev/urandom > '\(path)'"])
                try #require(made.status == 0, "\(made.errors)")
                let summed = try await run("/usr/bin/env", ["sha256sum", path])
                files.append((name, path, String(summed.text.prefix(64))))
            }
            self.files = files
        }

        var body: MultipartBody {
            get throws {
                var body = MultipartBody()
                try body.append(.text(fields[0].1, name: fields[0].0))
                for file in files { try body.append(.file(at: URL(fileURLWithPath: file.path), name: file.name)) }
                try body.append(.text(fields[1].1, name: fields[1].0))
                return body
            }
        }

        var sendArguments: [String] {
            ["-F", "\(fields[0].0)=\(fields[0].1)"] + files.flatMap { ["-F", "\($0.name)=@\($0.path)"] }
                + ["-F", "\(fields[1].0)=\(fields[1].1)"]
        }

        /// Every field and file as the server answered: the values, and the SHA-256 it computed as it spooled.
        func check(_ answer: Answer) {
            #expect(answer.fields?.map(\.value) == fields.map(\.1))
            #expect(answer.files?.map(\.field) == files.map(\.name))
            #expect(answer.files?.map(\.sha256) == files.map(\.sha256))
        }
    }

    /// Ten cuts, each after 8 to 24 MB of a connection (drawn from `seed`, printed when a test fails), then a proxy:
    /// at most 240 MB, so every cut falls inside the body.
    static func cuts(seed: UInt64) -> [String] {
        var state = seed
        return (0..<10).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return "cut:\(8_000_000 + Int(state >> 33) % 16_000_000)"
        } + ["proxy"]
    }

    enum Client { case send, asyncHTTPClient }

    /// The big form through a front that cuts it ten times, by `client`, to a server started with `arguments`.
    func cutTenTimes(
        _ client: Client, arguments: [String] = [], environment: [String: String] = [:], seed: UInt64,
        tls: (cert: String, key: String)? = nil
    ) async throws {
        let withTLS = tls.map { ["--tls-certificate", $0.cert, "--tls-key", $0.key] } ?? []
        let server = try await offPool { try RunningServer(arguments: arguments + withTLS, environment: environment) }
        // With TLS, the front cuts the encrypted bytes: each cut drops an HTTP/2 connection (ALPN h2) mid-body.
        let origin = tls == nil ? "http://127.0.0.1" : "https://localhost"
        let trust = tls.map { ["--cacert", $0.cert] } ?? []
        let actions = Self.cuts(seed: seed)
        let front = try Front(before: server, actions: actions)
        let outbox = try Outbox()
        defer {
            front.stop()
            server.stop()
            outbox.remove()
        }
        let form = try await BigForm(outbox)
        let length = try #require(try form.body.contentLength)
        let answer: Answer
        let resumptions: Int
        switch client {
        case .send:
            let cli = try #require(Self.cli)
            let sent = try await run(cli, ["send"] + trust + form.sendArguments + ["\(origin):\(front.port)/upload"])
            #expect(sent.status == 0, "\(sent.errors)")
            answer = try JSONDecoder().decode(Answer.self, from: sent.output)
            resumptions = sent.errors.components(separatedBy: "resuming from byte").count - 1
        case .asyncHTTPClient:
            var configuration = HTTPClient.Configuration()
            configuration.enableInterimResponses()
            let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            let events = Events()
            var options = HTTPClient.MultipartUploadOptions()
            options.maxResumptions = 10
            options.onEvent = { events.add($0) }
            do {
                let response = try await http.upload(
                    try form.body, to: "http://127.0.0.1:\(front.port)/upload", options: options)
                #expect(response.status.code == 200)
                let data = try await response.body.collect(upTo: 1 << 20)
                answer = try JSONDecoder().decode(Answer.self, from: Data(String(buffer: data).utf8))
                try await http.shutdown()
            } catch {
                try await http.shutdown()
                throw error
            }
            resumptions = events.all.filter { if case .resuming = $0 { true } else { false } }.count
        }
        form.check(answer)
        let (clientBytes, cuts) = try #require(front.stopCounting())
        print(
            "\(client), \(arguments.first ?? "the spool folder"): \(clientBytes) bytes sent for \(length), \(cuts) "
                + "cuts made of \(actions)")
        // One resumption for every cut made. A connection the client closes before its cut's bytes came takes that
        // cut's turn uncut (a CI run under load saw 9 resumptions for the ten turns).
        #expect(resumptions == cuts, "cuts \(actions)")
        #expect(cuts >= 8, "\(cuts) of the ten cuts were made")
        #expect(clientBytes >= length && Double(clientBytes) <= 1.1 * Double(length), "\(clientBytes) for \(length)")
        #expect(try server.spooledFiles() == [])
    }

    @Test(.enabled(if: cli != nil, "the multipart tool was not built into this build folder (swift test at the root)"))
    func aFormCutTenTimesArrivesWholeThroughSend() async throws {
        try await cutTenTimes(.send, seed: 1)
    }

    /// The same over HTTP/2 with TLS: `send` (AsyncHTTPClient, ALPN `h2`) reads the `104` on its stream and
    /// resumes with HEAD and PATCH on new HTTP/2 connections.
    @Test(
        .enabled(if: cli != nil, "the multipart tool was not built into this build folder (swift test at the root)"),
        .enabled(if: HTTP2Tests.certificate != nil, "needs openssl to make a certificate (.ci/run installs it)"))
    func aFormCutTenTimesArrivesWholeOverHTTP2ThroughSend() async throws {
        let certificate = try #require(HTTP2Tests.certificate)
        let server = try await offPool {
            try RunningServer(arguments: ["--tls-certificate", certificate.cert, "--tls-key", certificate.key])
        }
        defer { server.stop() }
        // The protocol send speaks to this server: HTTP/2 (its -i prints the 104's status line, then the 200's).
        let cli = try #require(Self.cli)
        let probe = try await run(
            cli, ["send", "-i", "--cacert", certificate.cert, "-F", "a=b", "https://localhost:\(server.port)/upload"])
        #expect(probe.text.hasPrefix("HTTP/2.0 104") && probe.text.contains("HTTP/2.0 200"), "\(probe.text)")
        try await cutTenTimes(.send, seed: 5, tls: certificate)
    }

    @Test func aFormCutTenTimesArrivesWholeThroughAsyncHTTPClient() async throws {
        try await cutTenTimes(.asyncHTTPClient, seed: 2)
    }

    @Test(
        .enabled(if: cli != nil, "the multipart tool was not built into this build folder (swift test at the root)"),
        .enabled(if: S3Endpoint.motoAvailable, "needs moto[server], boto3, requests and awscli (pip)"))
    func aFormCutTenTimesArrivesWholeInMoto() async throws {
        try await cutTenTimesIntoS3(try await offPool { try S3Endpoint(.moto) }, seed: 3)
    }

    @Test(
        .enabled(if: cli != nil, "the multipart tool was not built into this build folder (swift test at the root)"),
        .enabled(if: S3Endpoint.radosgwAvailable, "needs Ceph's radosgw (apt), boto3, requests and awscli (pip)"))
    func aFormCutTenTimesArrivesWholeInRadosgw() async throws {
        try await cutTenTimesIntoS3(try await offPool { try S3Endpoint(.radosgw) }, seed: 4)
    }

    func cutTenTimesIntoS3(_ store: S3Endpoint, seed: UInt64) async throws {
        let arguments = [
            "--store", "s3://\(store.bucket)/forms", "--s3-endpoint", store.endpoint, "--s3-part-size", "8388608",
        ]
        try await cutTenTimes(.send, arguments: arguments, environment: store.environment, seed: seed)
        let objects = try await store.s3api(["list-objects-v2"])["Contents"] as? [[String: Any]] ?? []
        #expect(objects.count == 2, "the two files, each once: \(objects.compactMap { $0["Key"] })")
        #expect(try await store.openUploads() == 0)
    }
}

extension S3Endpoint {
    /// The multipart uploads open in the bucket, after the server had a moment (up to 20 s) to abort a failed one.
    func openUploads() async throws -> Int {
        var open = -1
        for _ in 0..<200 {
            open = (try await s3api(["list-multipart-uploads"])["Uploads"] as? [Any])?.count ?? 0
            if open == 0 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        return open
    }
}
