import ExampleTestSupport
import Foundation
import Testing

/// Two UploadServers (`--node a`, `--node b`) behind nginx with the shipped `Deploy/nginx-fleet.conf`, its ports
/// changed: an upload's resumptions reach the server that holds it, and when that server is killed the client is
/// told the upload is gone (404) and starts again on the other, with nothing left behind. The client is
/// Scripts/resumable_clients.py's `cut`, which sends a form as the browser page does (a creation without bytes, then
/// the body in one `PATCH`, cut at half).
@Suite(
    .serialized, .enabled(if: RunningServer.binary != nil, "the UploadServer binary was not built"),
    .enabled(if: onPath("python3") != nil, "needs python3 for Scripts/resumable_clients.py"),
    .enabled(if: Nginx.path != nil && onPath("prlimit") != nil, "needs nginx and prlimit (apt: nginx, util-linux)"),
    .timeLimit(.minutes(5))
)
struct FleetTests {
    static let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Deploy/nginx-fleet.conf")

    /// The servers, by node name, and nginx in front of them.
    final class Fleet: @unchecked Sendable {
        var servers: [String: RunningServer]
        let nginx: Nginx

        init() throws {
            var servers = [String: RunningServer]()
            for node in ["a", "b"] { servers[node] = try Fleet.server(node) }
            self.servers = servers
            let ports = ["a", "b"].compactMap { servers[$0]?.port }
            do {
                nginx = try Nginx { prefix, port in
                    try FleetTests.configuration(prefix: prefix, port: port, nodes: ports)
                }
            } catch {
                for server in servers.values { server.stop() }
                throw error
            }
        }

        /// Node `node` on a free port, or on `port` and `spool` where it ran before.
        static func server(_ node: String, port: Int = 0, spool: URL? = nil) throws -> RunningServer {
            try RunningServer(
                // A patient body rule, as for the page's own tests: a browser in a loaded run can stall past the
                // default 10 s window.
                arguments: [
                    "--node", node, "--no-interim-responses", "--resume-window", "600", "--body-window", "120",
                ],
                port: port, spool: spool)
        }

        func stop() {
            nginx.stop()
            for server in servers.values { server.stop() }
        }
    }

    /// `Deploy/nginx-fleet.conf` as it is shipped, with nginx's process, files and port and the servers' ports
    /// this test's; each change must find what it changes.
    static func configuration(prefix: String, port: Int, nodes: [Int]) throws -> String {
        var text = try String(contentsOf: shipped, encoding: .utf8)
        func replace(_ old: String, _ new: String) throws {
            guard text.contains(old) else { throw NginxError(message: "Deploy/nginx-fleet.conf has no \(old)") }
            text = text.replacingOccurrences(of: old, with: new)
        }
        try replace("worker_processes auto;", Nginx.mainContext(prefix))
        try replace("http {\n", "http {\n" + Nginx.temporaryPaths(prefix) + "\n")
        try replace("listen 80;", "listen 127.0.0.1:\(port);")
        try replace("127.0.0.1:8081", "127.0.0.1:\(nodes[0])")
        try replace("127.0.0.1:8082", "127.0.0.1:\(nodes[1])")
        return text
    }

    /// Scripts/resumable_clients.py's `cut` through nginx: its report.
    func cut(_ fleet: Fleet, _ options: [String] = []) async throws -> [String: Any] {
        let python = try #require(onPath("python3"))
        let script = ResumableClientTests.script
        let arguments = [script, String(fleet.nginx.port), "cut", "--version", "8", "--size", "4000000"] + options
        let result = try await run(python, arguments)
        try #require(result.status == 0, "\(result.errors)")
        return try #require(try JSONSerialization.jsonObject(with: result.output) as? [String: Any])
    }

    /// The node an upload's location names: "a" for /resumable_upload/a-….
    func node(of location: Any?) -> String? {
        guard let location = location as? String, location.hasPrefix("/resumable_upload/") else { return nil }
        return location.dropFirst("/resumable_upload/".count).split(separator: "-").first.map(String.init)
    }

    /// Uploads cut at half through nginx resume where they were created: each location names a node, both nodes
    /// get uploads (a new upload may go to either), and each `HEAD` finds its upload (a `HEAD` sent to the other
    /// server would be `404`, and the client would start again), so the rest goes after the offset and the file
    /// arrives whole. Nothing is left in either spool folder.
    @Test func aCutUploadResumesOnTheServerThatHoldsIt() async throws {
        let fleet = try await offPool { try Fleet() }
        defer { fleet.stop() }
        var nodes = Set<String>()
        for _ in 0..<4 {
            let report = try await cut(fleet)
            let locations = try #require(report["locations"] as? [String], "\(report)")
            #expect(locations.count == 1 && report["gone"] == nil, "resumed, not started again: \(report)")
            nodes.formUnion(locations.compactMap { node(of: $0) })
            #expect(report["created"] as? Int == 201 && report["head"] as? Int == 204, "\(report)")
            #expect(report["interims"] as? [Int] == [], "no 104 for nginx to take for the answer: \(report)")
            let offset = try #require(report["offset"] as? Int, "\(report)")
            #expect(offset > 0 && offset <= 2_000_200, "at most the half sent: \(report)")
            #expect(report["append"] as? Int == 200 && report["complete"] as? String == "?1", "\(report)")
            #expect(report["answerSha256"] as? String == report["sha256"] as? String, "\(report)")
        }
        #expect(nodes == ["a", "b"], "new uploads go to both servers")
        for (node, server) in fleet.servers { #expect(try server.spooledFiles() == [], "node \(node)") }
        #expect(!fleet.nginx.errorLog().contains("[emerg]"), "\(fleet.nginx.errorLog())")
    }

    /// The browser page through the fleet: headless Chromium drives `/resumable` through a front that cuts its
    /// connections after each 5 MB it sends, in front of nginx. The 16 MiB file arrives whole without starting over:
    /// each resumption reached the server that holds the upload (the other would answer 404, and the page would
    /// start again).
    @Test(.enabled(if: BrowserTests.canDrive("chromium"), "needs chromium and python3 with websocket-client"))
    func theBrowserPageResumesThroughTheBalancer() async throws {
        let fleet = try await offPool { try Fleet() }
        let front = try Front(port: fleet.nginx.port, actions: Array(repeating: "cut:5000000", count: 3) + ["proxy"])
        defer {
            front.stop()
            fleet.stop()
        }
        let size = 16 << 20
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-page").path
        let report = try await ResumablePageTests.drive(
            "chromium", page: "http://127.0.0.1:\(front.port)/resumable", size: size, screenshots: prefix)
        let files = (report["answer"] as? [String: Any])?["files"] as? [[String: Any]]
        #expect(report["status"] as? Int == 200, "\(report)")
        #expect(files?.first?["sha256"] as? String == report["sha256"] as? String, "\(report)")
        #expect(files?.first?["size"] as? Int == size, "\(report)")
        #expect(report["startedOver"] as? Bool == false, "every resumption found its upload: \(report)")
        let (_, cuts) = try #require(front.stopCounting())
        let recoveries = try #require(report["resumptions"] as? Int) + (try #require(report["conflicts"] as? Int))
        #expect(cuts >= 2 && (1...cuts).contains(recoveries), "\(cuts) cuts, \(recoveries) recoveries: \(report)")
        for (node, server) in fleet.servers { #expect(try server.spooledFiles() == [], "node \(node)") }
        try? FileManager.default.removeItem(atPath: prefix + "-during.png")
        try? FileManager.default.removeItem(atPath: prefix + "-done.png")
    }

    /// `multipart send --create-upload-first` through the fleet: behind nginx no `104` comes, so the upload is created
    /// without its bytes (`201` with the location) and the body goes in an append; cut after 2 MB, it resumes on the
    /// server that holds it and the file arrives whole, having cost about the body once.
    @Test(.enabled(if: RunningServer.built("multipart") != nil, "the multipart tool was not built (swift build)"))
    func multipartSendResumesThroughTheBalancerWhenItCreatesFirst() async throws {
        let fleet = try await offPool { try Fleet() }
        let front = try Front(port: fleet.nginx.port, actions: ["cut:2000000", "proxy"])
        defer {
            front.stop()
            fleet.stop()
        }
        let outbox = try Outbox()
        defer { outbox.remove() }
        let bytes = randomBytes(6_000_000, seed: 51)
        let file = try outbox.file("f.bin", bytes)
        let result = try await run(
            try #require(RunningServer.built("multipart")),
            [
                "send", "--create-upload-first", "-F", "caption=fleet", "-F", "f=@\(file)", "--progress", "none",
                "http://127.0.0.1:\(front.port)/upload",
            ])
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.errors.contains("resuming from byte"), "\(result.errors)")
        let answer = try JSONDecoder().decode(Answer.self, from: result.output)
        #expect(answer.files?.first?.sha256 == sha256(bytes), "\(result.text)")
        let (clientBytes, cuts) = try #require(front.stopCounting())
        #expect(cuts == 1 && clientBytes < 6_600_000, "\(clientBytes) bytes sent through \(cuts) cuts")
        for (node, server) in fleet.servers { #expect(try server.spooledFiles() == [], "node \(node)") }
    }

    /// The server that holds a cut upload is killed: the client's `HEAD` is answered `404` by nginx, with a text
    /// that says to start again; the client starts again, on the other server, and the file arrives whole. The
    /// killed server's spool file stays until it starts again, whose sweep removes it; the other's folder is empty.
    /// A location that names no node is `404` too.
    @Test func aKilledServersUploadStartsAgainOnTheOther() async throws {
        let fleet = try await offPool { try Fleet() }
        defer { fleet.stop() }
        let held = try await cut(fleet, ["--hold"])
        let location = try #require((held["locations"] as? [String])?.first, "\(held)")
        let killed = try #require(node(of: location), "\(held)")
        let other = killed == "a" ? "b" : "a"
        let server = try #require(fleet.servers[killed])
        #expect(try server.spooledFiles().count == 1, "the cut upload's file waits")
        server.kill()

        let report = try await cut(fleet, ["--location", location])
        let gone = try #require(report["gone"] as? [String: Any], "\(report)")
        #expect(gone["head"] as? Int == 404, "\(report)")
        #expect((gone["text"] as? String)?.contains("start it again") == true, "\(report)")
        let locations = try #require(report["locations"] as? [String], "\(report)")
        #expect(locations.count == 1 && node(of: locations.first) == other, "started again on the other: \(report)")
        #expect(report["created"] as? Int == 201 && report["head"] as? Int == 204, "\(report)")
        #expect(report["append"] as? Int == 200, "\(report)")
        #expect(report["answerSha256"] as? String == report["sha256"] as? String, "\(report)")
        #expect(try fleet.servers[other]?.spooledFiles() == [], "node \(other)")

        #expect(try server.spooledFiles().count == 1, "a killed process removes nothing")
        let restarted = try await offPool { try Fleet.server(killed, port: server.port, spool: server.spool) }
        fleet.servers[killed] = restarted
        #expect(try restarted.spooledFiles() == [], "the restarted server's sweep removed what the killed one left")
        let again = try await cut(fleet, ["--location", location])
        let goneAgain = try #require(again["gone"] as? [String: Any], "\(again)")
        #expect(goneAgain["head"] as? Int == 404 && again["append"] as? Int == 200, "the restart knows none: \(again)")
        let unnamed = try await cut(fleet, ["--location", "/resumable_upload/zz9-00112233445566778899aabbccddeeff"])
        #expect((unnamed["gone"] as? [String: Any])?["head"] as? Int == 404, "\(unnamed)")
        for (node, server) in fleet.servers { #expect(try server.spooledFiles() == [], "node \(node)") }
    }
}
