import ExampleTestSupport
import Foundation
import StreamingMultipart
import StreamingMultipartNIO
import StreamingMultipartServer
import Testing

/// The hostile-client suite the Hummingbird example passes (`Examples/UploadServer/Scripts/hostile_clients.py`,
/// the same script and scenarios), against this app as `Deploy/` runs it: nginx with `upload-guards.conf` in front.
/// Where nginx answers differently from the Hummingbird example's own guards, the test says how.
@Suite(.serialized) struct HostileClientTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
            "UploadServer/Scripts/hostile_clients.py"
        ).path

    static var ready: Bool { onPath("python3") != nil && onPath("prlimit") != nil && Nginx.path != nil }

    /// Runs a scenario against `front` and returns its JSON report.
    static func scenario(_ name: String, on front: FrontedApp, _ options: [String] = []) async throws -> [String: Any] {
        let result = try await run(try #require(onPath("python3")), [script, String(front.port), name] + options)
        try #require(result.status == 0, "\(name): \(result.errors)")
        return try #require(try JSONSerialization.jsonObject(with: result.output) as? [String: Any], "\(result.text)")
    }

    /// The spooler's body rule made quick, as the Hummingbird suite runs its server: 1 KiB a second over each second.
    static let quick: MultipartSpooler.Limits = {
        var limits = MultipartSpooler.Limits.default
        limits.bodyTimeout = MultipartBodyTimeout(minimumBytesPerSecond: 1024, window: .seconds(1))
        return limits
    }()

    /// The apps each scenario of the shared suite runs against: the example's routes, and `smallApp`, what a new
    /// app writes with StreamingMultipartVapor.
    enum App: String, CustomTestStringConvertible, CaseIterable {
        case full, small
        var testDescription: String { rawValue }
    }

    @Test(
        .enabled(if: ready, "needs python3, prlimit and nginx"), .timeLimit(.minutes(2)), arguments: App.allCases)
    func slowHeadersAreCutWhileANormalUploadIsAnswered(_ kind: App) async throws {
        try await FrontedApp.with(small: kind == .small) { front in
            let before = try #require(front.openDescriptors())
            // 60 connections: nothing, half a request line, half the headers; nginx's client_header_timeout is 10 s.
            let report = try await Self.scenario("slow-headers", on: front, ["--connections", "60", "--hold", "20"])
            #expect(report["closed"] as? Int == 60, "\(report)")
            let upload = report["upload_meanwhile"] as? [String: Any]
            #expect(upload?["status"] as? Int == 200, "\(report)")
            #expect(try front.app.spooledFiles() == [])
            #expect((front.openDescriptors() ?? .max) <= before + 2, "nginx's descriptors: \(before) → after")
        }
    }

    @Test(.enabled(if: ready, "needs python3, prlimit and nginx"), .timeLimit(.minutes(2)))
    func tricklingBodiesAreAnswered408AndLeaveNothing() async throws {
        try await FrontedApp.with(limits: Self.quick) { front in
            let report = try await Self.scenario("slow-bodies", on: front, ["--connections", "10", "--hold", "30"])
            #expect(report["answers"] as? [Int] == Array(repeating: 408, count: 10), "\(report)")
            #expect(try front.app.spooledFiles() == [])
        }
    }

    @Test(
        .enabled(if: ready, "needs python3, prlimit and nginx"), .timeLimit(.minutes(2)), arguments: App.allCases)
    func stalledBodiesAreAnswered408AndLeaveNothing(_ kind: App) async throws {
        // Half a file, then nothing: the app's body rule answers within its window, before nginx's 30 s backstop.
        try await FrontedApp.with(limits: Self.quick, small: kind == .small) { front in
            let report = try await Self.scenario("stalled", on: front, ["--connections", "10", "--hold", "30"])
            #expect(report["answers"] as? [Int] == Array(repeating: 408, count: 10), "\(report)")
            #expect(try front.app.spooledFiles() == [])
        }
    }

    @Test(.enabled(if: ready, "needs python3, prlimit and nginx"), .timeLimit(.minutes(2)))
    func clientsThatNeverReadTheirAnswerPinNoMemory() async throws {
        // Ten forms of eight 1 MiB fields, answers never read. The app echoes at most 256 bytes a field, and what
        // it answers waits in nginx's proxy buffers (a few pages a connection), so nginx grows by little; the app
        // (this test process) holds the forms in flight, each up to the spooler's maxMemoryBytes (8 MiB) as bytes
        // and as text, as in the Hummingbird suite.
        try await FrontedApp.with { front in
            let nginxBefore = try #require(front.residentKiB())
            let appBefore = try #require(front.residentKiB(of: getpid()))
            let report = try await Self.scenario("never-read", on: front, ["--connections", "10", "--hold", "4"])
            let nginxAfter = try #require(front.residentKiB())
            let appAfter = try #require(front.residentKiB(of: getpid()))
            #expect(report["connections"] as? Int == 10, "\(report)")
            #expect(nginxAfter - nginxBefore < 16 << 10, "nginx: \(nginxBefore) KiB → \(nginxAfter) KiB")
            #expect(appAfter - appBefore < 10 * 2 * 8 * 1024, "the app: \(appBefore) KiB → \(appAfter) KiB")
            print(
                "HostileClientTests (Vapor): never-read, nginx RSS \(nginxBefore) → \(nginxAfter) KiB, app RSS \(appBefore) → \(appAfter) KiB, \(report)"
            )
        }
    }

    @Test(
        .enabled(if: ready, "needs python3, prlimit and nginx"), .timeLimit(.minutes(2)), arguments: App.allCases)
    func aRefusalIsAnsweredAndTheRestOfTheBodyIsNotRead(_ kind: App) async throws {
        try await FrontedApp.with(small: kind == .small) { front in
            let report = try await Self.scenario("refused", on: front)
            #expect(report["status"] as? Int == 415, "\(report)")
            let sent = try #require(report["sent_before_close"] as? Int)
            #expect(sent < 256 << 20, "nginx took \(sent) bytes of a refused 1 GiB body")
            print("HostileClientTests (Vapor): refused 1 GiB body, the client got \(sent) bytes in before the close")
        }
    }

    /// A body pushed on after a 404 (no route serves the path): the client cannot push it on unbounded.
    @Test(
        .enabled(if: ready, "needs python3, prlimit and nginx"), .timeLimit(.minutes(2)), arguments: App.allCases)
    func aBodyLeftUnreadAfterA404IsCutShort(_ kind: App) async throws {
        try await FrontedApp.with(small: kind == .small) { front in
            let report = try await Self.scenario("unread", on: front, ["--hold", "5"])
            #expect(report["status"] as? Int == 404 && report["closed"] as? Bool == true, "\(report)")
            let sent = try #require(report["sent"] as? Int)
            #expect(sent < 64 << 20, "nginx took \(sent) bytes after the 404")
            print("HostileClientTests (Vapor): a body after a 404, the client got \(sent) bytes in before the close")
        }
    }

    /// A whole form, then an epilogue that never ends (the parser reads none): answered 200, and the client cannot
    /// push the epilogue on unbounded; as against the Hummingbird servers.
    @Test(
        .enabled(if: ready, "needs python3, prlimit and nginx"), .timeLimit(.minutes(2)), arguments: App.allCases)
    func anEpilogueAfterA200IsCutShort(_ kind: App) async throws {
        try await FrontedApp.with(small: kind == .small) { front in
            let report = try await Self.scenario("epilogue", on: front, ["--hold", "5"])
            #expect(report["status"] as? Int == 200 && report["closed"] as? Bool == true, "\(report)")
            let sent = try #require(report["sent"] as? Int)
            #expect(sent < 64 << 20, "nginx took \(sent) bytes of epilogue after the 200")
        }
    }

    /// Forms one after another on one connection: each 200 leaves it open for the next.
    @Test(
        .enabled(if: ready, "needs python3, prlimit and nginx"), .timeLimit(.minutes(2)), arguments: App.allCases)
    func formsReadWholeKeepTheirConnection(_ kind: App) async throws {
        try await FrontedApp.with(small: kind == .small) { front in
            let report = try await Self.scenario("keep-alive", on: front)
            #expect(report["statuses"] as? [Int] == [200, 200, 200] && report["reused"] as? Int == 2, "\(report)")
        }
    }

    @Test(.enabled(if: ready, "needs python3, prlimit and nginx"), .timeLimit(.minutes(2)))
    func uploadsPastTheLimitAreAnswered503AtOnce() async throws {
        var limits = Self.quick
        limits.bodyTimeout?.window = .seconds(3)
        let admission = UploadAdmission.Configuration(maxUploads: 2, maxUploadsPerPeer: 100_000)
        try await FrontedApp.with(limits: limits, admission: admission) { front in
            let report = try await Self.scenario("stalled", on: front, ["--connections", "5", "--hold", "30"])
            let answers = try #require(report["answers"] as? [Int])
            #expect(answers.sorted() == [408, 408, 503, 503, 503], "\(report)")
            #expect(try front.app.spooledFiles() == [])
        }
    }

    @Test(.enabled(if: ready, "needs python3, prlimit and nginx"), .timeLimit(.minutes(2)))
    func withFewDescriptorsTheFrontNeverSpinsAndAnswersAfter() async throws {
        // nginx with 256 descriptors and 400 connections that send nothing, held 8 s. Unlike the Hummingbird
        // example (a 503 to each connection past its limit), nginx stops accepting for half a second each time
        // accept fails with EMFILE: the connections past its descriptors wait in the listen queue, unanswered,
        // and nginx does not spin (Vapor alone spins a core, as NIO 2.101 does). Once they leave, an upload gets 200.
        try await FrontedApp.with(descriptors: 256) { front in
            let ticksBefore = try #require(front.cpuTicks())
            let flood = try await Self.scenario("idle-flood", on: front, ["--connections", "400", "--hold", "8"])
            let ticks = try #require(front.cpuTicks()) - ticksBefore
            #expect(ticks < 80, "nginx used \(ticks) ticks while 400 idle connections were held for 8 s")
            #expect(front.errorLog().contains("Too many open files"), "nginx never ran out: \(flood)")
            #expect(try await Self.scenario("upload", on: front)["status"] as? Int == 200)
            #expect(try front.app.spooledFiles() == [])
            print(
                "HostileClientTests (Vapor): 256 descriptors, 400 idle connections held 8 s: \(ticks) ticks, \(flood)")
        }
    }

    @Test(
        .enabled(if: ready, "needs python3, prlimit and nginx"), .timeLimit(.minutes(5)), arguments: App.allCases)
    func pipelinedRequestsGetTheirContinueInOrder(_ kind: App) async throws {
        try await FrontedApp.with(small: kind == .small) { front in
            let report = try await Self.scenario("pipeline", on: front)
            let get = kind == .small ? 404 : 200  // the small app has no page at /
            #expect(report["order"] as? [Int] == [get, get, get, 100, 200], "\(report)")
        }
    }

    @Test(
        .enabled(if: ready, "needs python3, prlimit and nginx"), .timeLimit(.minutes(5)), arguments: App.allCases)
    func doubtfulFramingIsRefusedAndTheConnectionClosed(_ kind: App) async throws {
        try await FrontedApp.with(small: kind == .small) { front in
            let report = try await Self.scenario("framing", on: front)
            func outcome(_ name: String) -> (Int?, Bool?) {
                let result = report[name] as? [String: Any]
                return (result?["status"] as? Int, result?["closed"] as? Bool)
            }
            #expect(outcome("gzip, chunked") == (501, true), "\(report)")
            #expect(outcome("HTTP/1.0 chunked") == (400, true), "\(report)")
            #expect(outcome("chunked and length") == (400, true), "\(report)")
            #expect(outcome("chunked").0 == 200, "\(report)")
        }
    }

    @Test(
        .enabled(if: ready, "needs python3, prlimit and nginx"), .timeLimit(.minutes(5)), arguments: App.allCases)
    func aFailureOfTheServersOwnIsAnsweredWithoutItsPaths(_ kind: App) async throws {
        try await FrontedApp.with(small: kind == .small) { front in
            try FileManager.default.removeItem(at: front.app.spool)  // every spool file now fails to be created
            let report = try await Self.scenario("upload", on: front)
            #expect(report["status"] as? Int == 500, "\(report)")
            let body = try #require(report["body"] as? String)
            #expect(
                body.contains("writeFailed") && !body.contains(front.app.spool.path) && !body.contains("/tmp"),
                "\(body)")
        }
    }

    /// Eight uploads from eight addresses at 3 KiB/s hold every slot; a new upload cuts one of them (503), and
    /// none of the others is cut; the newcomer is answered 503 too and its retry is taken once the cut upload let go.
    /// The addresses reach the app through nginx's X-Forwarded-For.
    @Test(.enabled(if: ready, "needs python3, prlimit and nginx"), .timeLimit(.minutes(2)))
    func slowButLegalUploadsGiveWayToANewOne() async throws {
        let admission = UploadAdmission.Configuration(maxUploads: 8, maxUploadsPerPeer: 100_000, grace: .seconds(1))
        try await FrontedApp.with(admission: admission) { front in
            let report = try await Self.scenario(
                "slow-legal", on: front, ["--connections", "8", "--hold", "6", "--wait", "2"])
            #expect(report["upload"] as? Int == 200, "\(report)")
            let tries = try #require(report["upload_tries"] as? [Any]).map { ($0 as? Int) ?? 0 }
            #expect(tries.first == 503 && tries.count <= 3, "\(tries)")
            let statuses = try #require(report["slow_answers"] as? [Any]).map { ($0 as? Int) ?? 0 }
            #expect(statuses.filter { $0 == 503 }.count == 1 && statuses.filter { $0 == 200 }.count == 7, "\(statuses)")
        }
    }

    /// One address holds at most its share of the slots: past it, 429 at once.
    @Test(.enabled(if: ready, "needs python3, prlimit and nginx"), .timeLimit(.minutes(2)))
    func oneAddressGetsItsShareOfTheSlots() async throws {
        try await FrontedApp.with(admission: .init(maxUploads: 64, maxUploadsPerPeer: 2)) { front in
            let report = try await Self.scenario("per-peer", on: front, ["--connections", "4"])
            let answers = try #require(report["answers"] as? [Any]).map { ($0 as? Int) ?? 0 }
            #expect(answers.filter { $0 == 429 }.count == 2, "\(answers)")
        }
    }
}
