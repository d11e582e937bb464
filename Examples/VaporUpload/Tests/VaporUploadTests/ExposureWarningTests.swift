import ExampleTestSupport
import Foundation
import Testing
import Vapor
import VaporUpload

/// The app says at start when it is exposed without the proxy whose guards Vapor has no place for, and says nothing
/// behind it.
@Suite struct ExposureWarningTests {
    /// Keeps what is logged at warning and above.
    final class Captured: LogHandler, @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        var warnings: [String] { lock.withLock { lines } }

        func log(event: LogEvent) {
            guard event.level >= .warning else { return }
            lock.withLock { lines.append(event.message.description) }
        }
    }

    @Test(arguments: [false, true])
    func anAppNotBehindTheProxyWarnsAtStart(behindProxy: Bool) async throws {
        let app = try await Application.make(.testing)
        let captured = Captured()
        app.logger = Logger(label: "test") { _ in captured }
        let spool = FileManager.default.temporaryDirectory.appendingPathComponent("vapor-warn-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: spool) }
        var settings = UploadSettings(spoolDirectory: spool)
        settings.behindProxy = behindProxy
        try routes(app, settings: settings)
        try await app.asyncShutdown()
        let exposed = captured.warnings.filter { $0.contains("not behind a proxy") && $0.contains("nginx") }
        #expect(exposed.count == (behindProxy ? 0 : 1), "\(captured.warnings)")
    }
}
