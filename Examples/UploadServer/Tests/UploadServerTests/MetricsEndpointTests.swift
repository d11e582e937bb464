import ExampleTestSupport
import Foundation
import Testing

/// After a scripted run against UploadServer started with `--metrics-port` (uploads, a refusal of each kind the
/// route answers, a resumption, an abandoned upload, a wave of stalled bodies), the counters at `/metrics`
/// (Prometheus's text format, on the metrics listener) equal what the script did, and the gauges are back to zero.
@Suite(
    .enabled(if: RunningServer.binary != nil, "the UploadServer binary was not built"),
    .enabled(if: onPath("curl") != nil && onPath("python3") != nil, "needs curl and python3 (the clients)"),
    .timeLimit(.minutes(5))
)
struct MetricsEndpointTests {
    static let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts")

    /// What a refusal's answer says: `{"error":{"code":…}}`.
    struct Refusal: Decodable {
        struct Error: Decodable { var code: String }
        var error: Error
    }

    @Test(.timeLimit(.minutes(3))) func theCountersAtMetricsAreWhatTheScriptDid() async throws {
        let server = try await offPool {
            try RunningServer(
                arguments: HostileClientTests.quick + [
                    "--metrics-port", "0", "--resume-window", "2", "--max-file-bytes", "200000",
                ])
        }
        defer { server.stop() }
        let metrics = try await Self.metricsURL(of: server)
        let files = server.spool.deletingLastPathComponent().appendingPathComponent("metrics-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: files) }

        var started = 0
        var completed = 0
        var received = 0  // the files' bytes, at least: each body holds its file
        var refused: [String: Int] = [:]  // "status code" → refusals

        // Three uploads.
        for size in [1000, 50_000, 150_000] {
            let file = files.appendingPathComponent("\(size).bin")
            try Data(repeating: 7, count: size).write(to: file)
            let status = try await Self.curl(["-F", "caption=x", "-F", "f=@\(file.path)"], server)
            #expect(status.code == 200, "\(status)")
            started += 1
            completed += 1
            received += size
        }
        // A refusal of each kind the route answers: a file past --max-file-bytes (413, after the form began), a
        // body of the wrong type (415, before), a body with no delimiter (400, after).
        let tooBig = files.appendingPathComponent("big.bin")
        try Data(repeating: 1, count: 300_000).write(to: tooBig)
        let refusals: [(arguments: [String], startsAForm: Bool)] = [
            (["-F", "caption=x", "-F", "f=@\(tooBig.path)"], true),
            (["-H", "Content-Type: text/plain", "--data-binary", "hello"], false),
            (["-H", "Content-Type: multipart/form-data; boundary=xyz", "--data-binary", "no delimiter here"], true),
        ]
        for (arguments, startsAForm) in refusals {
            let status = try await Self.curl(arguments, server)
            let code = try JSONDecoder().decode(Refusal.self, from: status.body).error.code
            refused["\(status.code) \(code)", default: 0] += 1
            if startsAForm { started += 1 }
        }
        #expect(
            refused.keys.sorted() == ["400 boundaryNotFound", "413 limitExceeded", "415 invalidContentType"],
            "\(refused)")

        // A resumption: sent half, dropped, a stale append (409), then the rest.
        let stale = try await Self.script("resumable_clients.py", server, ["stale", "--size", "100000"])
        #expect(stale["append"] as? Int == 200, "\(stale)")
        started += 1
        completed += 1
        // An abandoned upload: sent half and dropped, never resumed; its window passes and it fails (408).
        _ = try await Self.script("resumable_clients.py", server, ["abandon", "--size", "100000"])
        started += 1
        refused["408 timedOut", default: 0] += 1
        // A hostile wave: six uploads that send half their file and then nothing, each answered 408.
        let wave = try await Self.script(
            "hostile_clients.py", server, ["stalled", "--connections", "6", "--hold", "10"])
        #expect(wave["answers"] as? [Int] == Array(repeating: 408, count: 6), "\(wave)")
        started += 6
        refused["408 timedOut", default: 0] += 6

        // The abandoned upload is counted once its window passed: wait for it, then read everything at once.
        var values: [String: Double] = [:]
        for _ in 0..<120 {
            values = try await Self.scrape(metrics)
            if values["multipart_resumable_abandoned_total"] == 1 && values["multipart_uploads_in_flight"] == 0 {
                break
            }
            try await Task.sleep(for: .milliseconds(500))
        }
        #expect(values["multipart_uploads_started_total"] == Double(started), "\(values)")
        #expect(values["multipart_uploads_completed_total"] == Double(completed), "\(values)")
        var counted: [String: Int] = [:]
        for (key, value) in values where key.hasPrefix("multipart_uploads_refused_total{") {
            let labels = Self.labels(key)
            counted["\(labels["status"] ?? "") \(labels["code"] ?? "")"] = Int(value)
        }
        #expect(counted == refused)
        #expect(values["multipart_resumptions_total"] == 1)
        #expect(values["multipart_resumable_abandoned_total"] == 1)
        #expect(values["multipart_uploads_in_flight"] == 0 && values["multipart_uploads_paused"] == 0)
        #expect(values["multipart_disk_budget_in_use_bytes"] == 0)
        #expect(values["multipart_form_duration_seconds_count"] == Double(started))
        #expect((values["multipart_bytes_received_total"] ?? 0) > Double(received))
        #expect((values["multipart_bytes_spooled_total"] ?? 0) >= Double(received))
        #expect(try server.spooledFiles() == [])
    }

    /// The metrics port is guarded as the uploads' is, with a connection limit of its own: heads that never end
    /// are cut at the header deadline, connections past its limit are answered 503 at once, and after both it
    /// still answers, as the uploads' port does.
    @Test(.timeLimit(.minutes(2))) func theMetricsPortIsGuardedAsTheUploadsPortIs() async throws {
        let server = try await offPool {
            try RunningServer(arguments: HostileClientTests.quick + ["--metrics-port", "0"])
        }
        defer { server.stop() }
        let metrics = try await Self.metricsURL(of: server)
        let port = try #require(Int(metrics.split(separator: ":").last?.prefix { $0.isNumber } ?? ""))
        let slow = try await Self.script(
            "hostile_clients.py", port: port, ["slow-headers", "--connections", "12", "--hold", "20"])
        #expect(slow["closed"] as? Int == 12, "\(slow)")
        let flood = try await Self.script(
            "hostile_clients.py", port: port, ["idle-flood", "--connections", "30", "--hold", "2"])
        let refused = try #require(flood["answered_503"] as? Int, "\(flood)")
        let limit = 16  // the server's MetricsEndpoint.connectionLimit
        #expect(refused >= 30 - limit, "\(flood)")
        #expect(try await Self.scrape(metrics)["multipart_uploads_in_flight"] == 0)
        let file = server.spool.deletingLastPathComponent().appendingPathComponent("guarded-\(UUID().uuidString)")
        try Data(repeating: 1, count: 1000).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(try await Self.curl(["-F", "f=@\(file.path)"], server).code == 200)
    }

    /// The metrics listener's URL, from the line the server logs when it listens.
    static func metricsURL(of server: RunningServer) async throws -> String {
        for _ in 0..<240 {
            let log = (try? String(contentsOf: server.log, encoding: .utf8)) ?? ""
            if let range = log.range(of: "metrics at http://127.0.0.1:") {
                let port = log[range.upperBound...].prefix { $0.isNumber }
                return "http://127.0.0.1:\(port)/metrics"
            }
            try await Task.sleep(for: .milliseconds(250))
        }
        throw RunningServer.ServerError(message: "the server did not say where its metrics are")
    }

    /// Every sample at `url`: `name` or `name{labels}` to its value.
    static func scrape(_ url: String) async throws -> [String: Double] {
        let result = try await run(try #require(onPath("curl")), ["-sS", url])
        var values: [String: Double] = [:]
        for line in result.text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            values[String(line[..<space])] = value
        }
        return values
    }

    /// `name{a="1",b="2"}`'s labels.
    static func labels(_ key: String) -> [String: String] {
        guard let open = key.firstIndex(of: "{") else { return [:] }
        var labels: [String: String] = [:]
        for pair in key[key.index(after: open)...].dropLast().split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { labels[String(parts[0])] = String(parts[1].dropFirst().dropLast()) }
        }
        return labels
    }

    /// A POST to /upload by curl with `arguments`: the status and the answer's body.
    static func curl(_ arguments: [String], _ server: RunningServer) async throws -> (code: Int, body: Data) {
        let result = try await run(
            try #require(onPath("curl")),
            ["-sS", "-w", "\n%{http_code}"] + arguments + [server.url + "/upload"])
        let text = result.text
        let newline = try #require(text.lastIndex(of: "\n"), "\(text) \(result.errors)")
        return (Int(text[text.index(after: newline)...]) ?? 0, Data(text[..<newline].utf8))
    }

    /// A script of Scripts/ against `server`: its JSON report.
    static func script(_ name: String, _ server: RunningServer, _ arguments: [String]) async throws -> [String: Any] {
        try await script(name, port: server.port, arguments)
    }

    /// A script of Scripts/ against `port` of 127.0.0.1: its JSON report.
    static func script(_ name: String, port: Int, _ arguments: [String]) async throws -> [String: Any] {
        let path = scripts.appendingPathComponent(name).path
        let result = try await run(try #require(onPath("python3")), [path, String(port)] + arguments)
        try #require(result.status == 0, "\(name) \(arguments): \(result.errors)")
        return try #require(try JSONSerialization.jsonObject(with: result.output) as? [String: Any], "\(result.text)")
    }
}
