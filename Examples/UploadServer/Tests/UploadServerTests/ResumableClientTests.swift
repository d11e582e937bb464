import ExampleTestSupport
import Foundation
import Testing

/// Scripts/resumable_clients.py's clients against the example server's resumable uploads: clients that abandon,
/// lie about the offset, guess locations, pass a limit, trickle or pause get what the draft and the server's limits
/// say. One at a time (their windows and rates are real time, in a server process), beside `ResumableUploadTests`.
@Suite(
    .serialized, .enabled(if: RunningServer.binary != nil, "the UploadServer binary was not built"),
    .enabled(if: onPath("python3") != nil, "needs python3 for Scripts/resumable_clients.py"),
    .timeLimit(.minutes(5))
)
struct ResumableClientTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/resumable_clients.py").path

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
    @Test(arguments: ["3", "5", "6", "8"]) func aStaleOffsetGets409AndTheRightOne(version: String) async throws {
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

    /// Draft 09's limits and length (interop version 8): `OPTIONS` on the upload path with the interop version is
    /// `204` with `Upload-Limit` (`max-size`, the server's body limit), and without it the app's own answer; the
    /// `104` carries the limits and the upload's `max-age`; `HEAD` says the `Upload-Length` the creation gave; an
    /// append that says another length is `400`, and the upload completes with the right one.
    @Test func draftNineAnnouncesItsLimitsAndKeepsTheLength() async throws {
        let server = try await offPool { try RunningServer(arguments: ["--resume-lifetime", "600"]) }
        defer { server.stop() }
        let report = try await scenario("limits", on: server, ["--version", "8", "--size", "1000000"])
        /// `Upload-Limit`'s members (`max-size=N, max-age=N`) by name.
        func limits(_ field: Any?) -> [String: Int] {
            Dictionary(
                ((field as? String) ?? "").split(separator: ",").compactMap { member in
                    let pair = member.split(separator: "=").map { $0.trimmingCharacters(in: .whitespaces) }
                    return pair.count == 2 ? Int(pair[1]).map { (pair[0], $0) } : nil
                }, uniquingKeysWith: { $1 })
        }
        let options = try #require(report["options"] as? [String: Any], "\(report)")
        let announced = limits(options["limit"])
        #expect(options["status"] as? Int == 204 && options["version"] as? String == "8", "\(report)")
        #expect((announced["max-size"] ?? 0) > 1_000_000 && announced["max-age"] == nil, "\(report)")
        let plain = try #require(report["optionsWithoutVersion"] as? [String: Any], "\(report)")
        #expect(plain["limit"] is NSNull && plain["status"] as? Int != 204, "the app's own answer: \(report)")
        let interim = limits(report["interimLimit"])
        #expect(interim["max-size"] == announced["max-size"], "\(report)")
        #expect((590...600).contains(interim["max-age"] ?? -1), "the lifetime, 600 s, from the creation: \(report)")
        let head = try #require(report["head"] as? [String: Any], "\(report)")
        #expect(head["status"] as? Int == 204 && head["cache"] as? String == "no-store", "\(report)")
        #expect(head["length"] as? String == String(try #require(report["length"] as? Int)), "\(report)")
        #expect(limits(head["limit"])["max-size"] == announced["max-size"], "\(report)")
        #expect((1...600).contains(limits(head["limit"])["max-age"] ?? -1), "\(report)")
        #expect(report["wrongLength"] as? Int == 400 && report["append"] as? Int == 200, "\(report)")
        #expect(report["answerSha256"] as? String == report["sha256"] as? String)
        #expect(try server.spooledFiles() == [])
    }

    /// A form sent in three pieces, as a client that cannot see a `104` (a browser's `fetch`) sends it: a creation
    /// that says `Upload-Complete: ?0` is answered `201 Created` with the location, the offset and the limits once
    /// its piece is in; an append on the same connection goes on from there (`204`); the last completes the form,
    /// whose answer names the file's SHA-256. In each interop version that has `Upload-Complete: ?0` (5, 6, 8).
    @Test(arguments: ["5", "6", "8"]) func aFormSentInPiecesArrivesWhole(version: String) async throws {
        let server = try await offPool { try RunningServer() }
        defer { server.stop() }
        let report = try await scenario("pieces", on: server, ["--version", version, "--size", "3000000"])
        let third = try #require(report["third"] as? Int, "\(report)")
        let created = try #require(report["created"] as? [String: Any], "\(report)")
        #expect(created["status"] as? Int == 201 && created["upload-complete"] as? String == "?0", "\(report)")
        #expect((created["location"] as? String)?.hasPrefix("/resumable_upload/") == true, "\(report)")
        #expect(created["upload-offset"] as? String == String(third), "\(report)")
        #expect((created["upload-limit"] as? String)?.contains("max-age=") == true, "\(report)")
        let middle = try #require(report["middle"] as? [String: Any], "\(report)")
        #expect(middle["status"] as? Int == 204 && middle["upload-offset"] as? String == String(2 * third), "\(report)")
        #expect(report["last"] as? Int == 200 && report["complete"] as? String == "?1", "\(report)")
        #expect(report["answerSha256"] as? String == report["sha256"] as? String, "\(report)")
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
        #expect(try await store.openUploads() == 0)  // once the window passed
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
    /// Uploads begun as a first piece that does not complete them (`Upload-Complete: ?0`, answered `201`) wait the
    /// same way, and are held to the same slots (`pieces`).
    @Test(arguments: [false, true]) func pausedUploadsNeverHoldMoreFilesThanTheSlots(pieces: Bool) async throws {
        let server = try await offPool { try RunningServer(arguments: Self.fourSlots) }
        defer { server.stop() }
        let report = try await scenario(
            "paused", on: server,
            ["--count", "12", "--spool", server.spool.path, "--slots", "4"]
                + (pieces ? ["--pieces", "--version", "8"] : []))
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
