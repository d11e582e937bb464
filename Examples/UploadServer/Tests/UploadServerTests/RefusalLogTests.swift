import ExampleTestSupport
import Foundation
import Testing

/// Each refusal SmallUploadServer answers is logged once, by StreamingMultipartHummingbird, with the request
/// context's logger: the line (swift-log's stream handler, on the server's standard error) carries Hummingbird's
/// request id, the status, the code and (past a limit) the limit's name.
@Suite(
    .enabled(if: RunningServer.smallBinary != nil && onPath("curl") != nil, "needs SmallUploadServer and curl"),
    .timeLimit(.minutes(5)))
struct RefusalLogTests {
    @Test func eachRefusalIsOneLineWithTheRequestID() async throws {
        let server = try RunningServer(small: true)
        defer { server.stop() }
        let svg = server.spool.deletingLastPathComponent().appendingPathComponent("refusal-\(UUID().uuidString).png")
        try Data("<svg xmlns=\"http://www.w3.org/2000/svg\"/>".utf8).write(to: svg)
        let caption = svg.appendingPathExtension("txt")  // past maxFieldBytes (1 MiB)
        try Data(repeating: UInt8(ascii: "a"), count: 2 << 20).write(to: caption)
        defer {
            try? FileManager.default.removeItem(at: svg)
            try? FileManager.default.removeItem(at: caption)
        }
        // (curl's arguments, the status and code the refusal must be logged with, its limit)
        let refusals: [([String], String, String, String?)] = [
            (["-F", "caption=x", "-F", "photos=@\(svg.path);type=image/png"], "415", "fileRefused", nil),
            (["-F", "caption=<\(caption.path)"], "413", "limitExceeded", "maxFieldBytes"),
            (["-F", "note=no caption"], "422", "missingField", nil),
            (["-H", "Content-Type: text/plain", "--data-binary", "hello"], "415", "invalidContentType", nil),
        ]
        for (arguments, status, _, _) in refusals {
            let result = try await run(
                onPath("curl")!,
                ["-sS", "-o", "/dev/null", "-w", "%{http_code}"] + arguments + [server.url + "/upload"])
            #expect(result.text == status, "\(arguments): \(result.text) \(result.errors)")
        }
        let logged = try String(contentsOf: server.log, encoding: .utf8).split(separator: "\n")
            .filter { $0.hasSuffix("form refused") }
        #expect(logged.count == refusals.count, "\(logged)")
        func value(_ key: String, in line: Substring) -> String? {
            guard let start = line.range(of: " \(key)=") else { return nil }
            return String(line[start.upperBound...].prefix { $0 != " " })
        }
        for (line, (_, status, code, limit)) in zip(logged, refusals) {
            #expect(line.contains(" info "), "\(line)")
            #expect(value("multipart.status", in: line) == status && value("multipart.code", in: line) == code)
            #expect(value("multipart.limit", in: line) == limit, "\(line)")
        }
        let ids = logged.compactMap { value("hb.request.id", in: $0) }
        #expect(ids.count == refusals.count && Set(ids).count == refusals.count, "\(logged)")
    }
}
