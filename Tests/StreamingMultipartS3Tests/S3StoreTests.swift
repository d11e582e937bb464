import Foundation
import MultipartTestSupport
import StreamingMultipart
import StreamingMultipartCrypto
import StreamingMultipartS3
import Testing

/// A local S3 endpoint (Tests/Peers/s3_moto.py) with one fresh bucket, read back through awscli: another client
/// than ours.
final class MotoBucket {
    static let python = Peers.python3(with: ["moto.server", "boto3"])
    static let aws = executableOnPath("aws")
    static var available: Bool { python != nil && aws != nil }

    let server: PeerUploadServer
    let bucket: String
    var endpoint: URL { URL(string: "http://127.0.0.1:\(server.port)")! }

    init() throws {
        bucket = "b-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        server = try PeerUploadServer(python: Self.python!, script: "s3_moto.py", arguments: [bucket])
    }

    func configuration(partSize: Int = 5 << 20, concurrency: Int = 2) throws -> S3Configuration {
        var configuration = try S3Configuration(
            endpoint: endpoint, bucket: bucket, prefix: "forms/",
            credentials: S3Credentials(accessKeyID: "moto", secretAccessKey: "moto"))
        configuration.partSize = partSize
        configuration.concurrency = concurrency
        configuration.retryBackoff = .milliseconds(10)
        return configuration
    }

    /// `aws s3api ARGUMENTS --bucket BUCKET` against this endpoint, its JSON answer parsed (nil for none).
    func s3api(_ arguments: [String]) throws -> [String: Any]? {
        let result = try runProgram(
            "/usr/bin/env",
            [
                "AWS_ACCESS_KEY_ID=moto", "AWS_SECRET_ACCESS_KEY=moto", "AWS_DEFAULT_REGION=us-east-1",
                "AWS_EC2_METADATA_DISABLED=true", Self.aws!, "--endpoint-url", endpoint.absoluteString, "--output",
                "json", "s3api",
            ] + arguments + ["--bucket", bucket])
        guard result.status == 0 else {
            throw S3Error(code: .transport, message: "aws s3api \(arguments) failed: \(result.stderr)")
        }
        let text = result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }

    /// The keys in the bucket, and the multipart uploads not completed nor aborted.
    func contents() throws -> (keys: [String], uploads: Int) {
        let objects = try s3api(["list-objects-v2"])?["Contents"] as? [[String: Any]] ?? []
        let uploads = try s3api(["list-multipart-uploads"])?["Uploads"] as? [[String: Any]] ?? []
        return (objects.compactMap { $0["Key"] as? String }.sorted(), uploads.count)
    }
}

/// The S3 store against moto: files stream into the bucket (multipart past one part, one PutObject under it) and
/// read back whole through awscli; every failure leaves neither objects nor multipart uploads.
@Suite struct S3StoreTests {
    static let large: [UInt8] = {
        var random = SeededGenerator(seed: 180)
        return random.bytes(12 << 20 + 12_345)  // three parts of 5 MiB, the last short
    }()

    func form() throws -> MultipartBody {
        var body = MultipartBody()
        try body.append(.text("Sunset", name: "caption"))
        try body.append(.data(Data(Self.large), name: "video", filename: "été \"1\"\r.mov", contentType: "video/mp4"))
        try body.append(.data(Data(Self.large.prefix(1000)), name: "thumb", filename: "t.jpg"))
        return body
    }

    @Test(.enabled(if: MotoBucket.available, "needs moto[server], boto3 and awscli (pip), the local S3 endpoint"))
    func filesStreamIntoTheBucketAndReadBackWhole() async throws {
        let moto = try MotoBucket()
        let body = try form()
        let spooler = MultipartSpooler(
            store: try S3Store(configuration: moto.configuration()), limits: .untimed, digest: SHA256Digest.self)
        let form = try await spooler.spool(chunkStream(try body.bytes(), size: 64 << 10), contentType: body.contentType)
        #expect(form.value(of: "caption") == "Sunset")
        let keys = form.files.compactMap { $0.storedObject?.key }
        #expect(keys.count == 2 && keys.allSatisfy { $0.hasPrefix("forms/") && $0.count == 6 + 32 })
        #expect(try moto.contents().keys == keys.sorted() && (try moto.contents().uploads) == 0)
        // The video went up as a multipart upload of three parts (S3's ETag says how many), the thumbnail as one PUT.
        #expect(form.files[0].storedObject?.attributes["etag"]?.hasSuffix("-3\"") == true)
        #expect(form.files[1].storedObject?.attributes["etag"]?.contains("-") == false)

        let folder = try TemporaryFolder()
        defer { folder.remove() }
        for (file, expected) in zip(form.files, [Self.large, Array(Self.large.prefix(1000))]) {
            let key = file.storedObject!.key
            let head = try #require(try moto.s3api(["head-object", "--key", key]))
            #expect(head["ContentLength"] as? Int == expected.count)
            let metadata = head["Metadata"] as? [String: String] ?? [:]
            #expect(metadata["filename"]?.removingPercentEncoding == file.filename)
            #expect(metadata["field"] == file.name)
            let copy = folder.url.appendingPathComponent("copy").path
            _ = try moto.s3api(["get-object", "--key", key, copy])
            let read = try [UInt8](Data(contentsOf: URL(fileURLWithPath: copy)))
            #expect(read == expected, "\(file.name) read back")
            #expect(file.digest?.hex == sha256Hex(read))
        }
        #expect(try moto.s3api(["head-object", "--key", keys[0]])?["ContentType"] as? String == "video/mp4")
    }

    @Test(.enabled(if: MotoBucket.available, "needs moto[server], boto3 and awscli (pip), the local S3 endpoint"))
    func everyFailureLeavesTheBucketEmpty() async throws {
        let moto = try MotoBucket()
        let body = try form()
        let bytes = try body.bytes()
        let store = try S3Store(configuration: moto.configuration())

        // The client goes away inside the video, after parts went up: the upload is aborted.
        let spooler = MultipartSpooler(store: store, limits: .untimed)
        await #expect(throws: DroppedBody.Reset.self) {
            _ = try await spooler.spool(
                DroppedBody(bytes: Array(bytes.prefix(11 << 20))), contentType: body.contentType)
        }
        #expect(try moto.contents().keys.isEmpty && (try moto.contents().uploads) == 0)

        // Cut after the video, inside the thumbnail: the finished video is deleted.
        await #expect(throws: MultipartError.self) {
            _ = try await spooler.spool(
                chunkStream(Array(bytes.prefix(bytes.count - 500)), size: 1 << 20), contentType: body.contentType)
        }
        #expect(try moto.contents().keys.isEmpty && (try moto.contents().uploads) == 0)

        // A limit breached mid-file.
        var limits = MultipartSpooler.Limits.untimed
        limits.maxDiskBytes = 7 << 20
        await #expect(throws: MultipartError.self) {
            _ = try await MultipartSpooler(store: store, limits: limits).spool(
                chunkStream(bytes, size: 1 << 20), contentType: body.contentType)
        }
        #expect(try moto.contents().keys.isEmpty && (try moto.contents().uploads) == 0)
    }

    @Test(.enabled(if: MotoBucket.available, "needs moto[server], boto3 and awscli (pip), the local S3 endpoint"))
    func s3sErrorsArriveTyped() async throws {
        let moto = try MotoBucket()
        var configuration = try moto.configuration()
        configuration.bucket = "no-such-bucket"
        let body = try form()
        do {
            _ = try await MultipartSpooler(store: try S3Store(configuration: configuration), limits: .untimed).spool(
                chunkStream(try body.bytes(), size: 1 << 20), contentType: body.contentType)
            Issue.record("a missing bucket took the form")
        } catch let error as MultipartError {
            #expect(error.code == .writeFailed && error.partIndex == 1)
            let cause = try #require(error.cause as? S3Error)
            #expect(cause.code == .service && cause.serviceCode == "NoSuchBucket" && cause.status == 404)
        }
    }
}

/// Bytes in chunks of 64 KiB, then the error a dropped connection gives.
struct DroppedBody: AsyncSequence {
    struct Reset: Error {}
    let bytes: [UInt8]

    struct AsyncIterator: AsyncIteratorProtocol {
        var remaining: ArraySlice<UInt8>
        mutating func next() async throws -> [UInt8]? {
            guard !remaining.isEmpty else { throw Reset() }
            defer { remaining = remaining.dropFirst(64 << 10) }
            return Array(remaining.prefix(64 << 10))
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(remaining: bytes[...]) }
}
