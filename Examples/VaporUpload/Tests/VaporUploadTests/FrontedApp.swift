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
    let port: Int
    let nginx: Process
    let prefix: URL
    var url: String { "http://127.0.0.1:\(port)" }

    static let nginxPath =
        onPath("nginx") ?? (FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") ? "/usr/sbin/nginx" : nil)
    static let guards = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Deploy/upload-guards.conf")

    private init(app: RunningApp, port: Int, nginx: Process, prefix: URL) {
        self.app = app
        self.port = port
        self.nginx = nginx
        self.prefix = prefix
    }

    /// Runs `body` with nginx in front of the app; `descriptors` is nginx's limit on open descriptors, set with
    /// `prlimit` (`worker_rlimit_nofile` applies to worker processes only); its `worker_connections` is larger, so that
    /// running out of descriptors, not of connections, is what stops it.
    static func with<T>(
        limits: MultipartSpooler.Limits = .default, descriptors: Int = 4096,
        admission: UploadAdmission.Configuration = .init(maxUploads: 64, maxUploadsPerPeer: 100_000),
        small: Bool = false, _ body: (FrontedApp) async throws -> T
    ) async throws -> T {
        try await RunningApp.with(
            limits: limits, kitRouteMaxBytes: nil, admission: admission, behindProxy: true, small: small
        ) { app in
            let fronted = try start(app: app, descriptors: descriptors)
            defer { fronted.stop() }
            return try await body(fronted)
        }
    }

    private static func start(app: RunningApp, descriptors: Int) throws -> FrontedApp {
        let nginxPath = try #require(nginxPath, "nginx is not installed")
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("vapor-nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: prefix, withIntermediateDirectories: true)
        let port = try freePort()
        let p = prefix.path
        let configuration = """
            daemon off;
            master_process off;
            pid \(p)/nginx.pid;
            error_log \(p)/error.log warn;
            events { worker_connections \(descriptors * 4); }
            http {
                include \(guards.path);
                access_log off;
                client_body_temp_path \(p)/body;
                proxy_temp_path \(p)/proxy;
                fastcgi_temp_path \(p)/fastcgi;
                uwsgi_temp_path \(p)/uwsgi;
                scgi_temp_path \(p)/scgi;
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
        try configuration.write(to: prefix.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        let nginx = Process()
        // prlimit execs nginx in its own process, so the pid is nginx's.
        nginx.executableURL = URL(fileURLWithPath: try #require(onPath("prlimit"), "prlimit (util-linux) is missing"))
        nginx.arguments = [
            "--nofile=\(descriptors):\(descriptors)", "--", nginxPath, "-e", "\(p)/error.log", "-p", p, "-c",
            "\(p)/nginx.conf",
        ]
        nginx.standardOutput = FileHandle.nullDevice
        nginx.standardError = FileHandle.nullDevice
        try nginx.run()
        let fronted = FrontedApp(app: app, port: port, nginx: nginx, prefix: prefix)
        for _ in 0..<100 where !canConnect(port) && nginx.isRunning { usleep(50_000) }
        guard canConnect(port) else {
            let log = (try? String(contentsOf: prefix.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
            fronted.stop()
            throw FrontError(message: "nginx did not start: \(log)")
        }
        return fronted
    }

    struct FrontError: Error { let message: String }

    /// Ends nginx with SIGKILL: it inherits this process's blocked signals (Foundation's threads block them), so a
    /// SIGTERM would stay pending, and it has nothing to save.
    func stop() {
        if nginx.isRunning {
            kill(nginx.processIdentifier, SIGKILL)
            nginx.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: prefix)
    }

    /// What nginx logged at `warn` and above.
    func errorLog() -> String {
        (try? String(contentsOf: prefix.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
    }

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

/// A port of 127.0.0.1 that nothing listens on now (the kernel's choice for a socket bound to port 0).
func freePort() throws -> Int {
    let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { throw FrontedApp.FrontError(message: "socket: errno \(errno)") }
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
            bind(socket, socketAddress, length) == 0 && getsockname(socket, socketAddress, &length) == 0
        }
    }
    guard bound else { throw FrontedApp.FrontError(message: "bind: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether a TCP connection to `port` of 127.0.0.1 opens.
func canConnect(_ port: Int) -> Bool {
    let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { return false }
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
}
