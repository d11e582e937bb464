import Foundation
import StreamingMultipartServer
import Vapor
import VaporUpload

// `swift run VaporUploadServer serve --hostname 127.0.0.1 --port 8080`; SPOOL_DIR sets the spool folder (a folder
// of its own in the temporary directory by default), and KIT_ROUTE_MAX_BYTES mounts the MultipartKit comparison
// route, which collects each body in memory up to that size (off by default). BEHIND_PROXY=1 says the app runs
// behind the nginx of Deploy/ (its X-Forwarded-For names the client); MAX_UPLOADS sets the upload slots (64) and
// MAX_UPLOADS_PER_PEER one address's share of them (8). TLS_CERTIFICATE and TLS_KEY (PEM files) serve HTTPS, with
// HTTP/2 by ALPN beside HTTP/1.1 (`serveTLS`). STALE_AFTER (seconds, 3600 by default) is the age past which a
// spooled file a killed run left is removed at start; 0 removes them all (a folder this app alone uses).
// IDLE_TIMEOUT (seconds, 30 by default) closes a connection that sends and receives nothing that long.
UploadServerHeap.keepFreedMemory()  // freed memory reused, not faulted back in (its docs)
var environment = try Environment.detect()
try LoggingSystem.bootstrap(from: &environment)  // `--log warning` or LOG_LEVEL, as Vapor's template reads them
let app = try await Application.make(environment)
let spool =
    Environment.get("SPOOL_DIR").map { URL(fileURLWithPath: $0) }
    ?? FileManager.default.temporaryDirectory.appendingPathComponent("vapor-upload-spool")
do {
    var settings = UploadSettings(spoolDirectory: spool)
    settings.kitRouteMaxBytes = Environment.get("KIT_ROUTE_MAX_BYTES").flatMap { Int($0) }
    settings.behindProxy = Environment.get("BEHIND_PROXY") == "1"
    if let age = Environment.get("STALE_AFTER") {
        guard let seconds = Double(age), seconds >= 0, seconds.isFinite else {
            throw SettingError(message: "STALE_AFTER is a number of seconds, zero or more: \(age)")
        }
        settings.staleAfter = .nanoseconds(Int64(min(seconds, 1e9) * 1e9))  // past 32 years: as good as forever
    }
    if let idle = Environment.get("IDLE_TIMEOUT") {
        guard let seconds = Int64(idle), seconds > 0 else {
            throw SettingError(message: "IDLE_TIMEOUT is a whole number of seconds above 0: \(idle)")
        }
        settings.idleTimeoutSeconds = seconds
    }
    if let slots = Environment.get("MAX_UPLOADS").flatMap({ Int($0) }) { settings.admission.maxUploads = max(1, slots) }
    if let share = Environment.get("MAX_UPLOADS_PER_PEER").flatMap({ Int($0) }) {
        settings.admission.maxUploadsPerPeer = max(1, share)
    }
    switch (Environment.get("TLS_CERTIFICATE"), Environment.get("TLS_KEY")) {
    case (let certificate?, let key?): try app.serveTLS(certificate: certificate, key: key)
    case (nil, nil): break
    default: throw SettingError(message: "TLS_CERTIFICATE and TLS_KEY go together: set both, or neither")
    }
    try routes(app, settings: settings)
    try await app.execute()
} catch {
    // Said once, by the logger (a setting that cannot be served, a port in use), then exit 1: rethrown at the top
    // level it was a fatal error with a backtrace.
    app.logger.report(error: error)
    try? await app.asyncShutdown()
    exit(1)
}
try await app.asyncShutdown()

/// A setting of the environment that cannot be served, named.
struct SettingError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
