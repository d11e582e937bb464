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
/// 1.1 times the body sent in all; and Scripts/resumable_clients.py's clients that abandon, lie about the offset,
/// guess locations, pass a limit or trickle get what the draft and the server's limits say.
@Suite(
    .serialized, .enabled(if: RunningServer.binary != nil, "the UploadServer binary was not built"),
    .enabled(if: onPath("python3") != nil, "needs python3 for Tests/Peers/front.py and Scripts/resumable_clients.py")
)
struct ResumableUploadTests {
    /// The `multipart` tool the repository's `swift test` built into the same build folder (`.ci/run` builds it
    /// first; `swift test --scratch-path ../../.build` finds it).
    static let cli = RunningServer.built("multipart")
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/resumable_clients.py").path

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
        _ client: Client, arguments: [String] = [], environment: [String: String] = [:], seed: UInt64
    ) async throws {
        let server = try await offPool { try RunningServer(arguments: arguments, environment: environment) }
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
            let sent = try await run(cli, ["send"] + form.sendArguments + ["http://127.0.0.1:\(front.port)/upload"])
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
        #expect(try await openUploads(store) == 0)
    }

    /// The multipart uploads open in the bucket, after the server had a moment (up to 20 s) to abort a failed one.
    func openUploads(_ store: S3Endpoint) async throws -> Int {
        var open = -1
        for _ in 0..<200 {
            open = (try await store.s3api(["list-multipart-uploads"])["Uploads"] as? [Any])?.count ?? 0
            if open == 0 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        return open
    }

    // MARK: Clients that misbehave

    /// Scripts/resumable_clients.py's `scenario` against `server`, with `environment` added to this process's: its
    /// report.
    func scenario(
        _ scenario: String, on server: RunningServer, _ options: [String] = [], environment: [String: String] = [:]
    ) async throws -> [String: Any] {
        let python = try #require(onPath("python3"))
        let variables = environment.map { "\($0.key)=\($0.value)" }
        let result = try await run(
            "/usr/bin/env", variables + [python, Self.script, String(server.port), scenario] + options)
        try #require(result.status == 0, "\(result.errors)")
        return try #require(try JSONSerialization.jsonObject(with: result.output) as? [String: Any])
    }

    /// A client that resumes from a stale offset gets 409 with the server's offset, then completes from it; in each
    /// interop version the server speaks (3 says `Upload-Incomplete: ?0` where 5 and 6 say `Upload-Complete: ?1`).
    @Test(arguments: ["3", "5", "6"]) func aStaleOffsetGets409AndTheRightOne(version: String) async throws {
        let server = try await offPool { try RunningServer() }
        defer { server.stop() }
        let report = try await scenario("stale", on: server, ["--version", version])
        #expect(report["head"] as? Int == 204 && report["stale"] as? Int == 409)
        let offset = try #require(report["offset"] as? Int)
        #expect(offset > 0 && report["conflictOffset"] as? Int == offset, "\(report)")
        #expect(report["append"] as? Int == 200, "\(report)")
        #expect(report["complete"] as? String == (version == "3" ? "?0" : "?1"), "\(report)")
        #expect(report["answerSha256"] as? String == report["sha256"] as? String)
        #expect(try server.spooledFiles() == [])
    }

    /// Guessed locations, a token named in the pipeline's field, and replays after the end get nothing of the
    /// upload; the upload itself completes.
    @Test func guessesAndReplaysGetNothingOfAnUpload() async throws {
        let server = try await offPool { try RunningServer() }
        defer { server.stop() }
        let report = try await scenario("guess", on: server)
        #expect((report["guessedHead"] as? [Int])?.allSatisfy { $0 == 404 } == true, "\(report)")
        #expect(report["guessedPatch"] as? Int == 404 && report["shortToken"] as? Int == 404, "\(report)")
        #expect(report["injected"] as? Int == 200 && report["injectedFiles"] as? Int == 1, "its own form: \(report)")
        #expect(report["append"] as? Int == 200, "\(report)")
        #expect(report["answerSha256"] as? String == report["sha256"] as? String)
        #expect(report["replayedHead"] as? Int == 404 && report["replayedPatch"] as? Int == 404, "\(report)")
        #expect(try server.spooledFiles() == [])
    }

    /// A client that never resumes: after the window its spooled file is gone and its location answers 404.
    @Test func anAbandonedUploadLeavesNothingAfterTheWindow() async throws {
        let server = try await offPool { try RunningServer(arguments: ["--resume-window", "2"]) }
        defer { server.stop() }
        let report = try await scenario("abandon", on: server)
        let location = try #require(report["location"] as? String)
        #expect(location.hasPrefix("/resumable_upload/") && location.count == "/resumable_upload/".count + 32)
        #expect(try server.spooledFiles().count == 1, "the file is spooled while the upload waits")
        for _ in 0..<200 where try !server.spooledFiles().isEmpty {  // the window, then the route's cleanup
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(try server.spooledFiles() == [])
        let asked = try await run(
            try #require(onPath("curl")), ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-I", server.url + location])
        #expect(asked.text == "404")
    }

    /// A server told to stop (SIGTERM) while an upload waits for its client ends that upload at once rather than
    /// after its window (10 minutes here), and leaves nothing in its spool folder.
    @Test func aServerThatStopsEndsItsPausedUploadsAtOnce() async throws {
        let server = try await offPool { try RunningServer(arguments: ["--resume-window", "600"]) }
        defer { server.stop() }
        _ = try await scenario("abandon", on: server)
        #expect(try server.spooledFiles().count == 1, "the file is spooled while the upload waits")
        server.process.terminate()
        let exited = try await offPool {
            let done = DispatchSemaphore(value: 0)
            Thread {
                server.process.waitUntilExit()
                done.signal()
            }.start()
            return done.wait(timeout: .now() + 60) == .success
        }
        #expect(exited, "the server was still running 60 s after SIGTERM")
        #expect(try server.spooledFiles() == [])
    }

    /// In S3 the abandoned upload's multipart upload is aborted, and nothing is in the bucket. The window (20 s) is
    /// long enough for the bucket to be listed while the upload waits, however slow awscli is on a loaded machine; the
    /// abort is then waited for, listing again, not slept for.
    @Test(.enabled(if: S3Endpoint.motoAvailable, "needs moto[server], boto3, requests and awscli (pip)"))
    func anAbandonedUploadLeavesNoOpenMultipartUploadInMoto() async throws {
        let store = try await offPool { try S3Endpoint(.moto) }
        let arguments = [
            "--store", "s3://\(store.bucket)/forms", "--s3-endpoint", store.endpoint, "--s3-part-size", "5242880",
            "--resume-window", "20",
        ]
        let server = try await offPool { try RunningServer(arguments: arguments, environment: store.environment) }
        defer { server.stop() }
        _ = try await scenario("abandon", on: server, ["--size", String(24 << 20)])
        let open = (try await store.s3api(["list-multipart-uploads"])["Uploads"] as? [Any])?.count ?? 0
        #expect(open == 1, "the file's multipart upload is open while the upload waits")
        #expect(try await openUploads(store) == 0)  // once the window passed
        #expect((try await store.s3api(["list-objects-v2"])["Contents"] as? [Any] ?? []).isEmpty)
    }

    /// A file past `--max-file-bytes` gets 413 though its upload resumed; a resumed upload that trickles is cut with
    /// 408, as a fresh one is.
    @Test func limitsAndTimeoutsHoldForResumedUploads() async throws {
        let arguments = ["--max-file-bytes", "2000000", "--body-rate", "1000", "--body-window", "2"]
        let server = try await offPool { try RunningServer(arguments: arguments) }
        defer { server.stop() }
        let limited = try await scenario("limit", on: server)
        #expect(limited["append"] as? Int == 413, "\(limited)")
        let trickled = try await scenario("trickle", on: server, ["--size", "1000000"])
        #expect(trickled["append"] as? Int == 408, "cut, where the trickle would take hours: \(trickled)")
        #expect(try server.spooledFiles() == [])
    }

    /// What the draft refuses is refused on an upload that waits: a `HEAD` or `DELETE` that carries the offset or the
    /// upload's end (400), an append in another interop version than the upload's (400: version 5 would skip version
    /// 6's append type); the upload is kept. A `DELETE` removes the upload before its 204: a `HEAD` right after finds
    /// nothing, every time (before, it still found it in 2 of 5).
    @Test func whatTheDraftRefusesIsRefusedAndADeleteIsDoneBeforeItsAnswer() async throws {
        let server = try await offPool { try RunningServer() }
        defer { server.stop() }
        let report = try await scenario("rules", on: server)
        #expect(report["headWithOffset"] as? Int == 400 && report["deleteWithComplete"] as? Int == 400, "\(report)")
        #expect(report["otherVersion"] as? Int == 400 && (report["offsetAfter"] as? Int ?? 0) > 0, "\(report)")
        #expect(report["deleted"] as? [Int] == Array(repeating: 204, count: 6), "\(report)")
        #expect(report["headAfterDelete"] as? [Int] == Array(repeating: 404, count: 5), "\(report)")
        for _ in 0..<100 where try !server.spooledFiles().isEmpty { try await Task.sleep(for: .milliseconds(50)) }
        #expect(try server.spooledFiles() == [])
    }

    /// Appends without bytes do not restart the window: one every second against a 3-second window, and the upload
    /// is gone (404) within it, its file removed (before, one 200-byte request per window held it forever).
    @Test func appendsWithoutBytesDoNotKeepAnUploadAlive() async throws {
        let server = try await offPool { try RunningServer(arguments: ["--resume-window", "3"]) }
        defer { server.stop() }
        let report = try await scenario("empty", on: server, ["--count", "8", "--every", "1"])
        let appends = try #require(report["appends"] as? [Int])
        #expect(appends.first == 201 || appends.first == 204, "\(appends)")
        #expect(appends.suffix(3) == [404, 404, 404], "still alive after 8 s of empty appends: \(appends)")
        #expect(try server.spooledFiles() == [])
    }

    /// Paused uploads from fresh addresses never hold more files than the server has slots: each new one cuts the
    /// slowest paused upload, whose route lets go of its spool file at once, and a slot is free only once it has
    /// (before, a cut freed the slot at once and the paused upload kept its file: 237 files with 64 slots).
    @Test func pausedUploadsNeverHoldMoreFilesThanTheSlots() async throws {
        let server = try await offPool { try RunningServer(arguments: Self.fourSlots) }
        defer { server.stop() }
        let report = try await scenario(
            "paused", on: server, ["--count", "12", "--spool", server.spool.path, "--slots", "4"])
        let held = try #require(report["held"] as? [Int])
        #expect(held.count == 12 && held.allSatisfy { $0 <= 4 }, "\(held)")
        #expect((held.max() ?? 0) >= 2, "the paused uploads held something: \(held)")
        #expect((report["created"] as? Int ?? 0) >= 8, "\(report)")
    }

    /// The same in S3: a paused upload that a newcomer cuts aborts its multipart upload (and lets go of its part
    /// buffer) at once, so the uploads open in the bucket never stay past the slots (before: 64 paused uploads
    /// lived with 32 slots, +82 MB). Each form is 24 MiB, sent half: two 5 MiB parts are in the bucket when it
    /// pauses.
    @Test(.enabled(if: S3Endpoint.motoAvailable, "needs moto[server], boto3, requests and awscli (pip)"))
    func pausedUploadsNeverHoldMoreMultipartUploadsThanTheSlotsInMoto() async throws {
        let store = try await offPool { try S3Endpoint(.moto) }
        let arguments =
            Self.fourSlots + [
                "--store", "s3://\(store.bucket)/forms", "--s3-endpoint", store.endpoint, "--s3-part-size", "5242880",
            ]
        let server = try await offPool { try RunningServer(arguments: arguments, environment: store.environment) }
        defer { server.stop() }
        let options = [
            "--count", "12", "--size", String(24 << 20), "--bucket", store.bucket, "--endpoint", store.endpoint,
            "--slots", "4",
        ]
        let report = try await scenario("paused", on: server, options, environment: store.environment)
        let held = try #require(report["held"] as? [Int])
        #expect(held.count == 12 && held.allSatisfy { $0 <= 4 }, "\(held)")
        #expect((held.max() ?? 0) >= 2, "the paused uploads held something: \(held)")
        #expect((report["created"] as? Int ?? 0) >= 6, "\(report)")
    }

    /// Four slots, a cut after 0.2 s, and every upload cuttable at once (no upload is protected by its rate).
    static let fourSlots = ["--max-uploads", "4", "--cut-grace", "0.2", "--protected-rate", "1000000000"]
}
