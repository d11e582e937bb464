import ExampleTestSupport
import Foundation
import StreamingMultipart
import StreamingMultipartNIO
import StreamingMultipartServer
import Testing
import VaporUpload

/// The app as `Deploy/` runs it: nginx in front with the shipped `Deploy/upload-guards.conf`, the app behind it
/// (in this process, ``RunningApp``) trusting nginx's `X-Forwarded-For`. nginx runs as one process
/// (`master_process off`) under a folder of its own, on a free port of 127.0.0.1.
final class FrontedApp: @unchecked Sendable {
    let app: RunningApp
    let server: Nginx
    var port: Int { server.port }
    var nginx: Process { server.process }
    var url: String { server.url }

    static let guards = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Deploy/upload-guards.conf")

    private init(app: RunningApp, server: Nginx) {
        self.app = app
        self.server = server
    }

    /// Runs `body` with nginx in front of the app; `descriptors` is nginx's limit on open descriptors
    /// (``Nginx/init(descriptors:configuration:)``); its `worker_connections` is larger, so that running out of
    /// descriptors, not of connections, is what stops it.
    static func with<T>(
        limits: MultipartSpooler.Limits = .default, descriptors: Int = 4096,
        admission: UploadAdmission.Configuration = .init(maxUploads: 64, maxUploadsPerPeer: 100_000),
        small: Bool = false, _ body: (FrontedApp) async throws -> T
    ) async throws -> T {
        try await RunningApp.with(
            limits: limits, kitRouteMaxBytes: nil, admission: admission, behindProxy: true, small: small
        ) { app in
            let server = try Nginx(descriptors: descriptors) { prefix, port in
                """
                \(Nginx.mainContext(prefix))
                events { worker_connections \(descriptors * 4); }
                http {
                    include \(guards.path);
                    access_log off;
                    \(Nginx.temporaryPaths(prefix))
                    upstream vapor_upload {
                        server 127.0.0.1:\(app.port);
                        keepalive 32;
                    }
                    server {
                        listen 127.0.0.1:\(port);
                        location / { proxy_pass http://vapor_upload; }
                    }
                }
                """
            }
            let fronted = FrontedApp(app: app, server: server)
            defer { fronted.stop() }
            return try await body(fronted)
        }
    }

    func stop() { server.stop() }

    /// What nginx logged at `warn` and above.
    func errorLog() -> String { server.errorLog() }

    /// nginx's CPU time so far, in clock ticks (Linux: utime + stime in /proc/PID/stat).
    func cpuTicks() -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/\(nginx.processIdentifier)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }

    /// nginx's open descriptors now (Linux: the entries of /proc/PID/fd).
    func openDescriptors() -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(nginx.processIdentifier)/fd"))?.count
    }

    /// nginx's resident memory now, in KiB (Linux: `VmRSS` in /proc/PID/status).
    func residentKiB() -> Int? { residentKiB(of: nginx.processIdentifier) }

    /// A process's resident memory now, in KiB.
    func residentKiB(of process: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8) else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        return line.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") }
    }
}
