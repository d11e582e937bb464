import ExampleTestSupport
import Foundation
import Testing

/// What the example sets beyond Vapor's defaults: idle connections closed, and the MultipartKit comparison route
/// mounted only when asked for, bounded.
@Suite(.serialized) struct GuardTests {
    /// A connection that sends nothing, or half a request head, is closed after the idle timeout.
    @Test(.enabled(if: onPath("python3") != nil, "needs python3"))
    func idleAndHalfSentConnectionsAreClosed() async throws {
        let script = """
            import socket, sys, time
            results = []
            for sent in (b"", b"POST /upload HTTP/1.1\\r\\nHost: x\\r\\n"):
                s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
                s.sendall(sent)
                s.settimeout(10)
                start = time.monotonic()
                try:
                    while s.recv(65536):
                        pass
                except OSError:
                    pass
                results.append(time.monotonic() - start)
            print(" ".join("%.2f" % r for r in results))
            """
        try await RunningApp.with(idleTimeoutSeconds: 1) { app in
            let result = try await run(onPath("python3")!, ["-c", script, String(app.port)])
            #expect(result.status == 0, "\(result.errors)")
            let seconds = result.text.split(separator: " ").compactMap {
                Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            #expect(seconds.count == 2 && seconds.allSatisfy { $0 < 5 }, "closed after \(result.text)")
        }
    }

    /// Off by default: nothing collects a body in memory unless the deployment mounts the route; mounted, a body
    /// past its size is refused with 413.
    @Test(.enabled(if: onPath("curl") != nil, "needs curl"))
    func theComparisonRouteIsOptInAndBounded() async throws {
        let outbox = try Outbox()
        defer { outbox.remove() }
        let big = try outbox.file("big.bin", randomBytes(2 << 20, seed: 3))
        let arguments = ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-F", "caption=x", "-F", "photos[]=@\(big)"]
        try await RunningApp.with(kitRouteMaxBytes: nil) { app in
            let result = try await run(onPath("curl")!, arguments + [app.url + "/kit/upload"])
            #expect(result.text == "404", "not mounted: \(result.text) \(result.errors)")
        }
        try await RunningApp.with(kitRouteMaxBytes: 1 << 20) { app in
            let result = try await run(onPath("curl")!, arguments + [app.url + "/kit/upload"])
            #expect(result.text == "413", "past its size: \(result.text) \(result.errors)")
        }
    }

    /// A caption of 100 KiB is echoed as its first 256 bytes, cut before a character that does not fit whole.
    @Test(.enabled(if: onPath("curl") != nil, "needs curl"))
    func theEchoIsBounded() async throws {
        let caption = "a" + String(repeating: "é", count: 50_000)
        let outbox = try Outbox()
        defer { outbox.remove() }
        let photo = try outbox.file("p.jpg", randomBytes(1000, seed: 4))
        try await RunningApp.with { app in
            let result = try await run(
                onPath("curl")!, ["-sS", "-F", "caption=\(caption)", "-F", "photos[]=@\(photo)", app.url + "/upload"])
            let answer = try JSONDecoder().decode(Answer.self, from: result.output)
            #expect(answer.caption == "a" + String(repeating: "é", count: 127), "\(result.text.prefix(300))")
        }
    }
}
