import Foundation
import InMemoryLogging
import Logging
import MultipartTestSupport
import StreamingMultipart
import Testing

/// A refused form names the limit it went past (`MultipartFormError.limit`, from `MultipartError.limit`), and
/// `MultipartFormError.report(to:)` logs it in one line at a level by status, with what a log search groups by.
@Suite struct RefusalLogTests {
    struct Upload: Decodable {
        var caption: String
        var tags: [String]?
    }

    /// Which limit each form goes past, and how: each is set low, one at a time, and the form sent past it.
    static let breaches: [(limit: String, set: @Sendable (inout MultipartSpooler.Limits) -> Void)] = [
        ("maxFiles", { $0.maxFiles = 1 }), ("maxFileBytes", { $0.parser.maxFileBytes = 100 }),
        ("maxFieldBytes", { $0.parser.maxFieldBytes = 2 }), ("maxParts", { $0.parser.maxParts = 2 }),
        ("maxBodyBytes", { $0.parser.maxBodyBytes = 300 }),
        ("maxHeaderBytesPerPart", { $0.parser.maxHeaderBytesPerPart = 40 }),
        ("maxHeadersPerPart", { $0.parser.maxHeadersPerPart = 1 }), ("maxMemoryBytes", { $0.maxMemoryBytes = 4 }),
        (
            "maxDiskBytes",
            {
                $0.maxDiskBytes = 100
                $0.memoryThreshold = 0
            }
        ),
    ]

    static func body() throws -> MultipartBody {
        var body = MultipartBody()
        try body.append(.text("Sunset", name: "caption"))
        try body.append(.data(Data(repeating: 1, count: 500), name: "a", filename: "a.bin"))
        try body.append(.data(Data(repeating: 2, count: 500), name: "b", filename: "b.bin"))
        return body
    }

    @Test(arguments: breaches)
    func aFormPastALimitNamesIt(limit: String, set: @Sendable (inout MultipartSpooler.Limits) -> Void) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var limits = MultipartSpooler.Limits.untimed
        set(&limits)
        let spooler = MultipartSpooler(directory: folder.url, limits: limits)
        let body = try Self.body()
        let error = await #expect(throws: MultipartFormError.self) {
            try await spooler.withDecodedForm(
                as: Upload.self, chunkStream(try body.bytes(), size: 64), contentType: body.contentType
            ) { _ in }
        }
        #expect(error?.response.status == 413 && error?.limit == limit, "\(String(describing: error))")
        #expect(try folder.contents() == [])
    }

    /// The decoder's limits are named too: a name nested past `maxDepth`, an index past `maxListLength`.
    @Test func theDecodersLimitsAreNamed() async throws {
        var decoder = MultipartFormDecoder()
        decoder.limits.maxDepth = 2
        decoder.limits.maxListLength = 3
        for (field, limit) in [("tags[a][b][c]", "maxDepth"), ("tags[7]", "maxListLength")] {
            var body = MultipartBody()
            try body.append(.text("Sunset", name: "caption"))
            try body.append(.text("x", name: field))
            let error = await #expect(throws: MultipartFormError.self) {
                try await MultipartSpooler(directory: NSTemporaryDirectory(), limits: .untimed).withDecodedForm(
                    as: Upload.self, chunkStream(try body.bytes(), size: 64), contentType: body.contentType,
                    decoder: decoder
                ) { _ in }
            }
            #expect(error?.response.status == 413 && error?.limit == limit, "\(field): \(String(describing: error))")
        }
    }

    /// One line a refusal: info for the client's mistakes, error for the server's side; the status, the code, the
    /// limit and the field as metadata; the whole error, the server's paths included, only there.
    @Test func aRefusalIsOneLineAtALevelByStatus() throws {
        let logs = InMemoryLogHandler()
        let logger = Logger(label: "request", factory: { _ in logs })
        var tooBig = MultipartError(
            code: .limitExceeded, message: "part 2 is larger than maxFileBytes", limit: "maxFileBytes")
        tooBig.partIndex = 1
        MultipartFormError(tooBig).report(to: logger)
        MultipartFormError(MultipartError(code: .writeFailed, message: "cannot write /var/spool/upload-1"))
            .report(to: logger)
        MultipartFormError(
            DecodingError.keyNotFound(
                AnyCodingKey("caption"), .init(codingPath: [], debugDescription: "no caption"))
        ).report(to: logger)

        // A client's field name with a line break cannot start a line of its own in the log.
        let forgeries = InMemoryLogHandler()
        MultipartFormError(
            DecodingError.keyNotFound(
                AnyCodingKey("a\nINFO forged"), .init(codingPath: [], debugDescription: "no field"))
        ).report(to: Logger(label: "request", factory: { _ in forgeries }))
        #expect(forgeries.entries.first?.metadata["multipart.field"] == "a\\nINFO forged")

        let entries = logs.entries
        #expect(entries.map(\.level) == [.info, .error, .info])
        #expect(entries.allSatisfy { "\($0.message)" == "form refused" })
        #expect(
            entries[0].metadata["multipart.status"] == "413" && entries[0].metadata["multipart.limit"] == "maxFileBytes"
        )
        #expect(entries[0].metadata["multipart.code"] == "limitExceeded")
        #expect(entries[1].metadata["multipart.status"] == "500")
        #expect(entries[1].metadata["multipart.error"]?.description.contains("/var/spool/upload-1") == true)
        #expect(entries[1].metadata["multipart.limit"] == nil)
        #expect(entries[2].metadata["multipart.status"] == "422" && entries[2].metadata["multipart.field"] == "caption")
    }

    struct AnyCodingKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
