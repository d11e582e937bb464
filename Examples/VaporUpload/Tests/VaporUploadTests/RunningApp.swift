import ExampleTestSupport
import Foundation
import StreamingMultipart
import StreamingMultipartCrypto
import StreamingMultipartNIO
import StreamingMultipartServer
import Testing
import Vapor
import VaporUpload

/// The app, in this process, listening on a free port of 127.0.0.1 with a spool folder of its own.
final class RunningApp: @unchecked Sendable {
    let app: Application
    let port: Int
    let spool: URL
    var url: String { "http://127.0.0.1:\(port)" }

    private init(app: Application, port: Int, spool: URL) {
        self.app = app
        self.port = port
        self.spool = spool
    }

    /// Runs `body` with the app serving (with `tls`, over HTTPS: HTTP/2 or HTTP/1.1 as ALPN picks); stops it and
    /// removes its spool folder after. `small` serves `smallApp`
    /// instead of the example's routes, with a spooler of `limits`; `spooler` serves it with that spooler; `routes`
    /// serves the routes it adds instead. `logs`, when given, gets what the app logs at
    /// `info` and above (else the app logs warnings only, as usual).
    /// Every test client comes from 127.0.0.1, so the default `admission` lifts the uploads-per-address limit (the
    /// test of that limit sets it).
    static func with<T>(
        limits: MultipartSpooler.Limits = .default, kitRouteMaxBytes: Int? = 16 << 20,
        idleTimeoutSeconds: Int64 = 30,
        admission: UploadAdmission.Configuration = .init(maxUploads: 64, maxUploadsPerPeer: 100_000),
        behindProxy: Bool = false, small: Bool = false, logs: (any LogHandler)? = nil,
        spooler: MultipartSpooler? = nil, tls: (cert: String, key: String)? = nil,
        routes custom: ((Application) throws -> Void)? = nil,
        _ body: (RunningApp) async throws -> T
    ) async throws -> T {
        let spool = FileManager.default.temporaryDirectory.appendingPathComponent("vapor-upload-\(UUID().uuidString)")
        let app = try await Application.make(.testing)
        app.logger.logLevel = .warning
        if let logs {
            app.logger = Logger(label: "vapor-upload") { _ in logs }
            app.logger.logLevel = .info
        }
        do {
            var settings = UploadSettings(spoolDirectory: spool, limits: limits)
            settings.kitRouteMaxBytes = kitRouteMaxBytes
            settings.idleTimeoutSeconds = idleTimeoutSeconds
            settings.admission = admission
            settings.behindProxy = behindProxy
            if let custom {
                try custom(app)
            } else if let spooler {
                smallApp(app, spooler: spooler)
            } else if small {
                try FileManager.default.createDirectory(at: spool, withIntermediateDirectories: true)
                smallApp(app, spooler: MultipartSpooler(directory: spool, limits: limits))
            } else {
                try routes(app, settings: settings)
            }
            app.http.server.configuration.hostname = "127.0.0.1"
            app.http.server.configuration.port = 0
            if let tls { try app.serveTLS(certificate: tls.cert, key: tls.key) }
            try await app.server.start(address: nil)
            let port = try #require(app.http.server.shared.localAddress?.port, "the server has no port")
            let running = RunningApp(app: app, port: port, spool: spool)
            let result = try await body(running)
            await app.server.shutdown()
            try await app.asyncShutdown()
            try? FileManager.default.removeItem(at: spool)
            return result
        } catch {
            await app.server.shutdown()
            try? await app.asyncShutdown()
            try? FileManager.default.removeItem(at: spool)
            throw error
        }
    }

    /// The files in the spool folder now.
    func spooledFiles() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: spool.path) }

    /// Waits, a tenth of a second at a time for at most `tries` tenths, until `condition` holds; whether it did.
    func eventually(tries: Int = 100, _ condition: () throws -> Bool) async throws -> Bool {
        for _ in 0..<tries {
            if try condition() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try condition()
    }
}

/// What both routes answer.
struct Answer: Decodable {
    struct Photo: Decodable, Equatable {
        var filename: String
        var size: Int64
        var sha256: String
    }

    struct Failure: Decodable {
        var code: String
        var message: String
    }

    var caption: String?
    var photos: [Photo]?
    var error: Failure?
}
