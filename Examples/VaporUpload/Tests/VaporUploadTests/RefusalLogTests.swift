import ExampleTestSupport
import Foundation
import StreamingMultipart
import Testing
import Vapor

/// Each refusal the app answers is logged once, by StreamingMultipartVapor, with the request's logger: the line
/// carries Vapor's request id, the status, the code and (past a limit) the limit's name, at `info` for a client's
/// mistake.
@Suite struct RefusalLogTests {
    /// Keeps every line, with the logger's metadata (the request id) and the line's own.
    struct Recording: LogHandler {
        final class Lines: @unchecked Sendable {
            private let lock = NSLock()
            private var lines: [(level: Logger.Level, message: String, metadata: Logger.Metadata)] = []
            var all: [(level: Logger.Level, message: String, metadata: Logger.Metadata)] { lock.withLock { lines } }
            func append(_ line: (Logger.Level, String, Logger.Metadata)) { lock.withLock { lines.append(line) } }
        }

        let lines: Lines
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            lines.append((event.level, event.message.description, metadata.merging(event.metadata ?? [:]) { $1 }))
        }
    }

    @Test(.enabled(if: onPath("curl") != nil, "needs curl"))
    func eachRefusalIsOneLineWithTheRequestID() async throws {
        let lines = Recording.Lines()
        var limits = MultipartSpooler.Limits.default
        limits.parser.maxFileBytes = 10_000
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("refusal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let svg = folder.appendingPathComponent("a.png")
        try Data("<svg xmlns=\"http://www.w3.org/2000/svg\"/>".utf8).write(to: svg)
        let big = folder.appendingPathComponent("big.png")
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 20_000)).write(to: big)
        // (curl's arguments, the status and code the refusal must be logged with, its limit)
        let refusals: [([String], String, String, String?)] = [
            (["-F", "caption=x", "-F", "photos=@\(svg.path);type=image/png"], "415", "fileRefused", nil),
            (["-F", "photos=@\(big.path)"], "413", "limitExceeded", "maxFileBytes"),
            (["-F", "note=no caption"], "422", "missingField", nil),
            (["-H", "Content-Type: text/plain", "--data-binary", "hello"], "415", "invalidContentType", nil),
        ]
        try await RunningApp.with(limits: limits, small: true, logs: Recording(lines: lines)) { app in
            for (arguments, status, _, _) in refusals {
                let result = try await run(
                    onPath("curl")!,
                    ["-sS", "-o", "/dev/null", "-w", "%{http_code}"] + arguments + [app.url + "/upload"])
                #expect(result.text == status, "\(arguments): \(result.text) \(result.errors)")
            }
        }
        let logged = lines.all.filter { $0.message == "form refused" }
        #expect(logged.count == refusals.count, "\(logged.map(\.metadata))")
        for (line, (_, status, code, limit)) in zip(logged, refusals) {
            #expect(line.level == .info)
            #expect(line.metadata["request-id"] != nil, "the request's id: \(line.metadata)")
            #expect(line.metadata["multipart.status"]?.description == status)
            #expect(line.metadata["multipart.code"]?.description == code)
            #expect(line.metadata["multipart.limit"]?.description == limit)
        }
        #expect(Set(logged.compactMap { $0.metadata["request-id"]?.description }).count == refusals.count)
    }

    /// A store that keeps no bytes and cannot remove what it stored: a failed form's files stay, and the spooler
    /// says so in a warning.
    struct StubbornStore: MultipartFileStore {
        struct Writer: MultipartStoreWriter {
            let key: String
            nonisolated(nonsending) func append(_ bytes: MultipartBytes) async throws {}
            func finish(byteCount: Int64, digest: SpooledFile.Digest?) async throws -> MultipartStoredObject {
                MultipartStoredObject(key: key, location: "stubborn://\(key)", attributes: [:])
            }
            func abort() async {}
        }
        struct CannotRemove: Error {}

        func begin(_ file: MultipartStoreFile) async throws -> any MultipartStoreWriter {
            Writer(key: UUID().uuidString)
        }
        func remove(_ object: MultipartStoredObject) async throws { throw CannotRemove() }
    }

    /// What the spooler logs of a request's form goes to that request's logger: the warning that a failed form's
    /// file was left in the store carries Vapor's request id, beside the refusal's line of the same request.
    @Test(.enabled(if: onPath("curl") != nil, "needs curl"))
    func aSpoolersWarningCarriesTheRequestID() async throws {
        let lines = Recording.Lines()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stubborn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let png = folder.appendingPathComponent("a.png")
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 100)).write(to: png)
        var limits = MultipartSpooler.Limits.default
        limits.maxFiles = 1  // the second photo fails the form after the first was stored
        limits.memoryThreshold = 0
        let spooler = MultipartSpooler(store: StubbornStore(), limits: limits)
        try await RunningApp.with(logs: Recording(lines: lines), spooler: spooler) { app in
            let result = try await run(
                onPath("curl")!,
                [
                    "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-F", "caption=x", "-F", "photos=@\(png.path)",
                    "-F", "photos=@\(png.path)", app.url + "/upload",
                ])
            #expect(result.text == "413", "\(result.text) \(result.errors)")
        }
        let warning = try #require(lines.all.first { $0.message.contains("left in the store") }, "\(lines.all)")
        #expect(warning.level == .warning)
        let refusal = try #require(lines.all.first { $0.message == "form refused" })
        #expect(
            warning.metadata["request-id"] != nil && warning.metadata["request-id"] == refusal.metadata["request-id"])
    }
}
