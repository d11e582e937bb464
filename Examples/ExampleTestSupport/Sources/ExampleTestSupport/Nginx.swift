public import Foundation

/// nginx as the examples' tests run it: one process (`daemon off`, `master_process off`) under a folder of its own
/// (its pid, its error log and its temporary files), on a free port of 127.0.0.1, with the configuration a test
/// writes. A fronted Vapor app and a fleet of upload servers both start it here.
///
/// ```swift
/// let nginx = try Nginx { prefix, port in
///     """
///     \(Nginx.mainContext(prefix))
///     events { worker_connections 256; }
///     http {
///         \(Nginx.temporaryPaths(prefix))
///         server { listen 127.0.0.1:\(port); location / { proxy_pass http://127.0.0.1:\(app.port); } }
///     }
///     """
/// }
/// defer { nginx.stop() }
/// ```
public final class Nginx: @unchecked Sendable {
    /// nginx on PATH or in /usr/sbin (Debian's package); nil when it is not installed.
    public static let path =
        onPath("nginx") ?? (FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") ? "/usr/sbin/nginx" : nil)

    /// The port of 127.0.0.1 it listens on.
    public let port: Int
    /// Its folder: nginx.conf, nginx.pid, error.log and the temporary files' folders.
    public let prefix: URL
    /// Its process: nginx itself (`prlimit` execs it).
    public let process: Process
    public var url: String { "http://127.0.0.1:\(port)" }

    /// Starts nginx with the configuration `configuration(prefix, port)` returns, and waits (5 s at most) until
    /// `port` takes connections. `descriptors` is its limit on open descriptors, set with `prlimit`
    /// (`worker_rlimit_nofile` applies to worker processes only).
    public init(descriptors: Int = 4096, configuration: (_ prefix: String, _ port: Int) throws -> String) throws {
        guard let nginxPath = Self.path else { throw NginxError(message: "nginx is not installed") }
        guard let prlimit = onPath("prlimit") else { throw NginxError(message: "prlimit (util-linux) is missing") }
        prefix = FileManager.default.temporaryDirectory.appendingPathComponent("nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: prefix, withIntermediateDirectories: true)
        port = try freePort()
        process = Process()
        let p = prefix.path
        do {
            try configuration(p, port).write(
                to: prefix.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
            process.executableURL = URL(fileURLWithPath: prlimit)
            process.arguments = [
                "--nofile=\(descriptors):\(descriptors)", "--", nginxPath, "-e", "\(p)/error.log", "-p", p, "-c",
                "\(p)/nginx.conf",
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
        } catch {
            try? FileManager.default.removeItem(at: prefix)
            throw error
        }
        for _ in 0..<100 where !canConnect(port) && process.isRunning { usleep(50_000) }
        guard canConnect(port) else {
            let log = errorLog()
            stop()
            throw NginxError(message: "nginx did not start: \(log)")
        }
    }

    /// The main context's lines for a process of its own under `prefix`.
    public static func mainContext(_ prefix: String) -> String {
        "daemon off;\nmaster_process off;\npid \(prefix)/nginx.pid;\nerror_log \(prefix)/error.log warn;"
    }

    /// The `http` block's lines that keep nginx's temporary files under `prefix` (its defaults are root's).
    public static func temporaryPaths(_ prefix: String) -> String {
        ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map { "\($0)_temp_path \(prefix)/\($0);" }
            .joined(separator: "\n")
    }

    /// Ends nginx with SIGKILL: it inherits this process's blocked signals (Foundation's threads block them), so a
    /// SIGTERM would stay pending, and it has nothing to save. Removes its folder.
    public func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: prefix)
    }

    /// What nginx logged (at `warn` and above with ``mainContext(_:)``).
    public func errorLog() -> String {
        (try? String(contentsOf: prefix.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
    }
}

/// Why nginx did not start.
public struct NginxError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
    public init(message: String) { self.message = message }
}

/// A port of 127.0.0.1 that nothing listens on now (the kernel's choice for a socket bound to port 0).
public func freePort() throws -> Int {
    let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { throw NginxError(message: "socket: errno \(errno)") }
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
    guard bound else { throw NginxError(message: "bind: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether a TCP connection to `port` of 127.0.0.1 opens.
public func canConnect(_ port: Int) -> Bool {
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
