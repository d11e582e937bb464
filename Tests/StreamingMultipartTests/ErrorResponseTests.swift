import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// `MultipartErrorResponse`: every failure of reading or decoding a form becomes a status, a code and a message fit
/// for the client (no path of the server's, no Swift wording), with the field named as the client sent it.
@Suite struct ErrorResponseTests {
    struct Order: Decodable {
        struct Item: Decodable {
            var id: Int
            var size: Size
        }

        enum Size: String, Decodable {
            case small, large
        }

        var customer: String
        var items: [Item]
    }

    /// What decoding `fields` as `T` answers, through the spooler and through the parts alone.
    func answers<T: Decodable>(
        _ type: T.Type, _ fields: [(String, String)], decoder: MultipartFormDecoder = MultipartFormDecoder(),
        maxMemoryBytes: Int = 8 << 20
    ) async throws -> [MultipartErrorResponse] {
        var body = MultipartBody()
        for (name, value) in fields { try body.append(.text(value, name: name)) }
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var answers: [MultipartErrorResponse] = []
        do {
            var limits = MultipartSpooler.Limits.untimed
            limits.maxMemoryBytes = Int64(maxMemoryBytes)
            let spooler = MultipartSpooler(directory: folder.url, limits: limits)
            _ = try await spooler.withSpooledForm(
                chunkStream(try body.bytes(), size: 100), contentType: body.contentType
            ) {
                try decoder.decode(T.self, from: $0)
            }
            Issue.record("the spooled form decoded")
        } catch {
            answers.append(MultipartErrorResponse(for: error, keyStrategy: decoder.keyStrategy))
        }
        do {
            let parts = try chunkStream(try body.bytes(), size: 100).multipartParts(contentType: body.contentType)
            _ = try await decoder.decode(T.self, from: parts, maxMemoryBytes: maxMemoryBytes)
            Issue.record("the parts decoded")
        } catch {
            answers.append(MultipartErrorResponse(for: error, keyStrategy: decoder.keyStrategy))
        }
        return answers
    }

    @Test func aMissingFieldIs422WithItsName() async throws {
        let missing = try await answers(Order.self, [("customer", "Ann"), ("items[0][size]", "small")])
        for answer in missing {
            #expect(answer.status == 422 && answer.code == "missingField")
            #expect(answer.field == "items[0][id]")
            #expect(answer.message == "the form has no field \"items[0][id]\"")
        }
        #expect(missing.count == 2)
    }

    @Test func aMistypedFieldIs422InTheClientsWords() async throws {
        let fields = [("customer", "Ann"), ("items[0][id]", "seven"), ("items[0][size]", "small")]
        for answer in try await answers(Order.self, fields) {
            #expect(answer.status == 422 && answer.code == "invalidField")
            #expect(answer.field == "items[0][id]")
            #expect(answer.message == "the field \"items[0][id]\" holds \"seven\", not a whole number")
        }
    }

    @Test func aTypesOwnErrorIs422WithoutSwiftsText() async throws {
        // Swift's RawRepresentable decoding says "Cannot initialize Size from invalid String value medium".
        let fields = [("customer", "Ann"), ("items[0][id]", "7"), ("items[0][size]", "medium")]
        for answer in try await answers(Order.self, fields) {
            #expect(answer.status == 422 && answer.code == "invalidField")
            #expect(answer.field == "items[0][size]")
            #expect(answer.message == "the field \"items[0][size]\" does not hold a value this form takes")
            #expect(!answer.message.contains("Size") && !answer.message.contains("initialize"))
        }
    }

    @Test func aNameSentTwiceIs422() async throws {
        let fields = [("customer", "Ann"), ("customer", "Bob")]
        for answer in try await answers(Order.self, fields) {
            #expect(answer.status == 422 && answer.code == "invalidField" && answer.field == "customer")
        }
    }

    @Test func theFieldIsNamedByTheDecodersKeyStrategy() async throws {
        var decoder = MultipartFormDecoder()
        decoder.keyStrategy = .dots
        let dotted = try await answers(Order.self, [("customer", "Ann"), ("items[0].size", "small")], decoder: decoder)
        for answer in dotted { #expect(answer.field == "items[0].id") }
    }

    @Test func aLimitHitWhileDecodingIs413() async throws {
        var decoder = MultipartFormDecoder()
        decoder.limits.maxListLength = 10
        let listed = try await answers(Order.self, [("customer", "Ann"), ("items[99][id]", "1")], decoder: decoder)
        for answer in listed {
            #expect(answer.status == 413 && answer.code == "limitExceeded" && answer.field == nil)
        }
        let memory = try await answers(
            Order.self, [("customer", String(repeating: "a", count: 5000))], maxMemoryBytes: 1000)
        #expect(memory.map(\.status) == [413, 413] && memory.allSatisfy { $0.code == "limitExceeded" })
    }

    @Test func theServersOwnFailuresSayNothingOfItsPaths() throws {
        let write = MultipartError(
            code: .writeFailed, message: "writing /var/spool/uploads/upload-1f2e failed",
            cause: CocoaError(.fileWriteUnknown))
        let answer = MultipartErrorResponse(for: write)
        #expect(answer.status == 500 && answer.code == "writeFailed")
        #expect(!answer.message.contains("/var/spool"))

        struct Unexpected: Error { var path = "/etc/secret" }
        let other = MultipartErrorResponse(for: Unexpected())
        #expect(other.status == 500 && other.code == "internalError" && !other.message.contains("/etc"))

        let cancelled = MultipartErrorResponse(for: CancellationError())
        #expect(cancelled.status == 503 && cancelled.code == "cancelled")

        // A store that kept failing is no fault of the client's, who may come back: 503, without the store's URL.
        let store = MultipartError(
            code: .storeUnavailable, message: "S3 kept failing (4 tries): PUT http://10.0.0.7:9000/forms/a: 503")
        let unavailable = MultipartErrorResponse(for: store)
        #expect(unavailable.status == 503 && unavailable.code == "storeUnavailable")
        #expect(!unavailable.message.contains("10.0.0.7") && MultipartFormError(store).retryAfterSeconds == 1)
    }

    @Test func aMalformedBodyKeepsItsCodeAndOffset() throws {
        let truncated = MultipartError(code: .truncated, message: "the body ended inside part 2's headers", offset: 812)
        let answer = MultipartErrorResponse(for: truncated)
        #expect(
            answer
                == MultipartErrorResponse(
                    status: 400, code: "truncated", message: "the body ended inside part 2's headers", offset: 812))
    }

    @Test func itEncodesAsTheJSONErrorBody() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let missing = MultipartErrorResponse(
            status: 422, code: "missingField", message: "the form has no field \"a\"", field: "a")
        #expect(
            String(decoding: try encoder.encode(missing), as: UTF8.self)
                == #"{"error":{"code":"missingField","field":"a","message":"the form has no field \"a\""}}"#)
        let busy = MultipartErrorResponse(for: MultipartError(code: .serverBusy, message: "no room"))
        #expect(
            String(decoding: try encoder.encode(busy), as: UTF8.self)
                == #"{"error":{"code":"serverBusy","message":"the server is shutting down or busy; try again later"}}"#)
    }
}
