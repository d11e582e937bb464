import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// `MultipartSpooler.withDecodedForm`: a request's form, multipart or urlencoded, decoded as one type and handed to a
/// closure, its files removed after; every failure before the closure runs is a `MultipartFormError` with the answer
/// to send, and what the closure throws passes as it is.
@Suite struct DecodedFormTests {
    struct Upload: Decodable {
        var caption: String
        var count: Int
        var photos: [SpooledFile]
    }

    struct Failed: Error {}

    /// A body that yields `bytes` and then fails with `error`, as a connection that drops does.
    struct FailingBody: AsyncSequence {
        let bytes: [UInt8]
        let error: any Error
        struct AsyncIterator: AsyncIteratorProtocol {
            var bytes: [UInt8]?
            let error: any Error
            mutating func next() async throws -> [UInt8]? {
                guard let chunk = bytes else { throw error }
                bytes = nil
                return chunk
            }
        }
        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(bytes: bytes, error: error) }
    }

    func multipart(_ fields: [(String, String)], photo: [UInt8]? = nil) throws -> MultipartBody {
        var body = MultipartBody()
        for (name, value) in fields { try body.append(.text(value, name: name)) }
        if let photo { try body.append(.data(Data(photo), name: "photos", filename: "a.jpg")) }
        return body
    }

    /// The answer `body` gets, or nil when it decoded.
    func failure(_ body: MultipartBody, contentType: String? = nil, spooler: MultipartSpooler) async throws
        -> MultipartFormError?
    {
        do {
            try await spooler.withDecodedForm(
                as: Upload.self, chunkStream(try body.bytes(), size: 64), contentType: contentType ?? body.contentType
            ) { _ in }
            return nil
        } catch let error as MultipartFormError {
            return error
        }
    }

    @Test func bothEncodingsDecodeAsOneTypeAndTheFilesGoAfter() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let spooler = MultipartSpooler(directory: folder.url, limits: .untimed)
        let body = try multipart([("caption", "Sunset"), ("count", "2")], photo: Array(repeating: 7, count: 5000))
        let path = try await spooler.withDecodedForm(
            as: Upload.self, chunkStream(try body.bytes(), size: 100), contentType: body.contentType
        ) { upload in
            #expect(upload.caption == "Sunset" && upload.count == 2)
            #expect(upload.photos.map(\.byteCount) == [5000])
            return try #require(upload.photos.first?.path)
        }
        #expect(!FileManager.default.fileExists(atPath: path), "the spooled photo outlived the closure")

        let encoded = Array("caption=caf%C3%A9+cr%C3%A8me&count=3".utf8)
        let upload = try await spooler.withDecodedForm(
            as: Upload.self, chunkStream(encoded, size: 5), contentType: "application/x-www-form-urlencoded"
        ) { $0 }
        #expect(upload.caption == "café crème" && upload.count == 3 && upload.photos.isEmpty)

        let form = try await spooler.withDecodedForm(
            as: SpooledForm.self, chunkStream(try body.bytes(), size: 100), contentType: body.contentType
        ) { $0 }
        #expect(form.value(of: "caption") == "Sunset" && form.files.count == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty)
    }

    @Test func everyFailureBeforeTheClosureIsAnAnswer() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let spooler = MultipartSpooler(directory: folder.url, limits: .untimed)

        let missing = try await failure(try multipart([("caption", "x")]), spooler: spooler)
        #expect(missing?.response.status == 422 && missing?.response.code == "missingField")
        #expect(missing?.response.field == "count")

        let mistyped = try await failure(try multipart([("caption", "x"), ("count", "two")]), spooler: spooler)
        #expect(mistyped?.response.status == 422 && mistyped?.response.field == "count")
        #expect(mistyped?.response.message.contains("whole number") == true, "\(mistyped?.response.message ?? "")")

        let text = try await failure(try multipart([]), contentType: "text/plain", spooler: spooler)
        #expect(text?.response.status == 415 && text?.response.code == "invalidContentType")

        var small = MultipartSpooler.Limits.untimed
        small.parser.maxFieldBytes = 10
        let big = try await failure(
            try multipart([("caption", String(repeating: "a", count: 100)), ("count", "1")]),
            spooler: MultipartSpooler(directory: folder.url, limits: small))
        #expect(big?.response.status == 413 && big?.response.code == "limitExceeded")

        do {
            try await spooler.withDecodedForm(as: Upload.self, chunkStream([], size: 1), contentType: nil) { _ in }
            Issue.record("no Content-Type decoded")
        } catch let error as MultipartFormError {
            #expect(error.response.status == 415 && error.response.message == "the request has no Content-Type")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty)
    }

    /// The body's own failure is the client's (400, `streamFailed`), a cancelled one 503; the closure's own error is
    /// not an answer of the library's.
    @Test func theBodysFailureIs400AndTheClosuresErrorPassesAsItIs() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let spooler = MultipartSpooler(directory: folder.url, limits: .untimed)
        let body = try multipart([("caption", "x"), ("count", "1")], photo: [1, 2, 3])
        let bytes = try body.bytes()
        let contentType = body.contentType
        let failures: [(any Error, Int, String)] = [
            (Failed(), 400, "streamFailed"), (CancellationError(), 503, "cancelled"),
        ]
        for (error, status, code) in failures {
            do {
                try await spooler.withDecodedForm(
                    as: Upload.self, FailingBody(bytes: Array(bytes.prefix(150)), error: error),
                    contentType: contentType
                ) { _ in }
                Issue.record("a failed body decoded")
            } catch let failure as MultipartFormError {
                #expect(failure.response.status == status && failure.response.code == code, "\(failure)")
                #expect(failure.response.message.contains("Failed") == false)
            }
        }
        await #expect(throws: Failed.self) {
            try await spooler.withDecodedForm(
                as: Upload.self, chunkStream(bytes, size: 50), contentType: contentType
            ) { _ in throw Failed() }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty)
    }

    @Test func aSpooledFormIsNoValueInsideAnotherType() throws {
        struct Holder: Decodable { var form: SpooledForm }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Holder.self, from: Data(#"{"form": {}}"#.utf8))
        }
    }
}
