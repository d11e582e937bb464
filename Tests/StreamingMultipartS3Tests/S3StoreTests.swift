import Foundation
import InMemoryLogging
import InMemoryTracing
import Logging
import Metrics
import MetricsTestKit
import MultipartTestSupport
import StreamingMultipart
import StreamingMultipartCrypto
import Testing
import Tracing

@testable import StreamingMultipartS3

/// An S3 endpoint for the tests, started once per test process and shared (each test makes buckets of its own):
/// moto (Tests/Peers/s3_moto.py), which checks nothing it is sent, and Ceph's radosgw (Tests/Peers/radosgw.py), a
/// real engine that checks signatures. awscli reads the buckets back: another client than ours.
final class S3Peer: @unchecked Sendable {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case moto, radosgw
        var testDescription: String { rawValue }
    }

    static let aws = executableOnPath("aws")
    static let motoAvailable = aws != nil && Peers.python3(with: ["moto.server", "boto3"]) != nil
    /// moto computes a multipart upload's composite CRC-32C with Python's optional `crc32c` module, and without it
    /// silently computes CRC-32 in its place (`moto/s3/utils.py`, `compute_checksum`): the answer a test reads is
    /// then wrong whatever the store sent.
    static let motoComputesCRC32C = motoAvailable && Peers.python3(with: ["crc32c"]) != nil
    static let radosgwAvailable =
        aws != nil
        && ["ceph-mon", "ceph-osd", "radosgw", "radosgw-admin", "ceph-authtool", "monmaptool"].allSatisfy {
            executableOnPath($0) != nil
        }

    /// moto, started at first use; nil where it cannot start.
    static let moto: S3Peer? = try? S3Peer(kind: .moto)
    /// radosgw on a one-node cluster, started at first use; nil where it cannot start.
    static let radosgw: S3Peer? = try? S3Peer(kind: .radosgw)

    static func shared(_ kind: Kind) throws -> S3Peer {
        try #require(kind == .moto ? moto : radosgw, "\(kind) did not start")
    }

    let kind: Kind
    /// The script that serves the endpoint, until the test process ends.
    let script: PeerUploadServer
    let endpoint: URL
    let credentials: S3Credentials

    private init(kind: Kind) throws {
        self.kind = kind
        script = try PeerUploadServer(
            python: try #require(executableOnPath("python3")), script: kind == .moto ? "s3_moto.py" : "radosgw.py",
            arguments: [], portFirst: kind == .moto, quiet: true)
        switch kind {
        case .moto:
            endpoint = URL(string: "http://127.0.0.1:\(script.port)")!
            credentials = S3Credentials(accessKeyID: "moto", secretAccessKey: "moto")
        case .radosgw:
            let started = try #require(
                try JSONSerialization.jsonObject(with: Data(script.firstLine.utf8)) as? [String: String])
            endpoint = try #require(URL(string: started["endpoint"] ?? ""))
            credentials = S3Credentials(
                accessKeyID: try #require(started["access"]), secretAccessKey: try #require(started["secret"]))
        }
    }

    /// A new bucket of the test's own.
    func makeBucket() throws -> String {
        let bucket = "b-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        _ = try s3api(["create-bucket"], bucket: bucket)
        return bucket
    }

    func configuration(bucket: String, partSize: Int = 5 << 20, concurrency: Int = 2) throws -> S3Store.Configuration {
        var configuration = try S3Store.Configuration(
            endpoint: endpoint, bucket: bucket, prefix: "forms/", credentials: .static(credentials))
        configuration.partSize = partSize
        configuration.concurrency = concurrency
        configuration.retry.initialDelay = .milliseconds(10)
        return configuration
    }

    /// `aws s3api ARGUMENTS --bucket BUCKET` against this endpoint, its JSON answer parsed (nil for none).
    func s3api(_ arguments: [String], bucket: String) throws -> [String: Any]? {
        let result = try runProgram(
            "/usr/bin/env",
            [
                "AWS_ACCESS_KEY_ID=\(credentials.accessKeyID)", "AWS_SECRET_ACCESS_KEY=\(credentials.secretAccessKey)",
                "AWS_DEFAULT_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true", Self.aws!, "--endpoint-url",
                endpoint.absoluteString, "--output", "json", "s3api",
            ] + arguments + ["--bucket", bucket])
        guard result.status == 0 else {
            throw S3Error(code: .transport, message: "aws s3api \(arguments) failed: \(result.stderr)")
        }
        let text = result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }

    /// The keys in `bucket`, and its multipart uploads neither completed nor aborted.
    func contents(of bucket: String) throws -> (keys: [String], uploads: Int) {
        let objects = try s3api(["list-objects-v2"], bucket: bucket)?["Contents"] as? [[String: Any]] ?? []
        let uploads = try s3api(["list-multipart-uploads"], bucket: bucket)?["Uploads"] as? [[String: Any]] ?? []
        return (objects.compactMap { $0["Key"] as? String }.sorted(), uploads.count)
    }
}

/// The S3 store against moto and against radosgw: files stream into the bucket (multipart past one part, one
/// PutObject under it) and read back whole through awscli; every failure leaves neither objects nor multipart
/// uploads; S3's refusals arrive typed.
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

    @Test(.enabled(if: S3Peer.motoAvailable, "needs moto[server], boto3 and awscli (pip), the local S3 endpoint"))
    func filesStreamIntoMotoAndReadBackWhole() async throws {
        try await roundTrip(try S3Peer.shared(.moto), checksum: .sha256)
    }

    /// The same with CRC-32C, whose composite checksum moto computes right only with Python's `crc32c` module.
    @Test(
        .enabled(
            if: S3Peer.motoComputesCRC32C,
            "needs moto[server], boto3, awscli and crc32c (pip): without crc32c, moto answers a CRC-32 for CRC-32C"))
    func filesStreamIntoMotoWithCRC32CAndReadBackWhole() async throws {
        try await roundTrip(try S3Peer.shared(.moto), checksum: .crc32c)
    }

    /// radosgw checks every signature: a part sent as `UNSIGNED-PAYLOAD` beside its CRC-32C is taken too.
    @Test(
        .enabled(if: S3Peer.radosgwAvailable, "needs Ceph (ceph-mon, ceph-osd, radosgw: apt) and awscli"),
        arguments: [S3Store.Configuration.Checksum.sha256, .crc32c])
    func filesStreamIntoRadosgwAndReadBackWhole(checksum: S3Store.Configuration.Checksum) async throws {
        try await roundTrip(try S3Peer.shared(.radosgw), checksum: checksum)
    }

    @Test(.enabled(if: S3Peer.motoAvailable, "needs moto[server], boto3 and awscli (pip), the local S3 endpoint"))
    func everyFailureLeavesMotosBucketEmpty() async throws { try await failures(try S3Peer.shared(.moto)) }

    @Test(.enabled(if: S3Peer.radosgwAvailable, "needs Ceph (ceph-mon, ceph-osd, radosgw: apt) and awscli"))
    func everyFailureLeavesRadosgwsBucketEmpty() async throws { try await failures(try S3Peer.shared(.radosgw)) }

    /// A route's file filter against a bucket: a form with an SVG that the filter refuses leaves nothing in the
    /// bucket, not even the video stored before it; with the SVG skipped, the rest of the form is stored and the SVG
    /// is not.
    @Test(.enabled(if: S3Peer.motoAvailable, "needs moto[server], boto3 and awscli (pip), the local S3 endpoint"))
    func aRefusedFileLeavesTheBucketEmptyAndASkippedOneIsLeftOut() async throws {
        let peer = try S3Peer.shared(.moto)
        var body = try form()  // a caption, a 12 MiB video in three parts, a thumbnail
        try body.append(.data(Data("<svg/>".utf8), name: "logo", filename: "logo.svg", contentType: "image/svg+xml"))
        let bytes = try body.bytes()
        func spooler(_ bucket: String, _ svg: MultipartFileDecision) throws -> MultipartSpooler {
            var spooler = MultipartSpooler(
                store: try S3Store(configuration: peer.configuration(bucket: bucket)), limits: .untimed)
            spooler.fileFilter = { $0.contentType == "image/svg+xml" ? svg : .store }
            return spooler
        }

        let refusing = try peer.makeBucket()
        await #expect {
            _ = try await spooler(refusing, .refuse(status: 415, message: "no SVG")).spool(
                chunkStream(bytes, size: 64 << 10), contentType: body.contentType)
        } throws: { error in
            (error as? MultipartError)?.code == .fileRefused && MultipartErrorResponse(for: error).status == 415
        }
        let left = try peer.contents(of: refusing)
        #expect(left.keys.isEmpty && left.uploads == 0, "after a refusal: \(left)")

        let skipping = try peer.makeBucket()
        let form = try await spooler(skipping, .skip).spool(
            chunkStream(bytes, size: 64 << 10), contentType: body.contentType)
        #expect(form.files.map(\.name) == ["video", "thumb"])
        let stored = try peer.contents(of: skipping)
        #expect(stored.keys == form.files.compactMap { $0.storedObject?.key }.sorted() && stored.uploads == 0)
    }

    /// An object's type comes from the allow-list, checked against what the file's bytes show as well as what the
    /// client says; every object is an attachment; the type as sent is kept as metadata; a type with a control byte
    /// is the client's error, and nothing is stored.
    @Test(.enabled(if: S3Peer.motoAvailable, "needs moto[server], boto3 and awscli (pip), the local S3 endpoint"))
    func storedTypesComeFromTheAllowList() async throws {
        let peer = try S3Peer.shared(.moto)
        let bucket = try peer.makeBucket()
        var body = MultipartBody()
        let png = [UInt8](try Data(contentsOf: Repository.fixtures.appendingPathComponent("sniffing/image.png")))
        let markup = Array("<b>markup</b>".utf8)
        let sent: [(type: String, bytes: [UInt8], stored: String)] = [
            ("text/html; charset=utf-8", markup, "application/octet-stream"),
            ("image/svg+xml", Array("<svg/>".utf8), "application/octet-stream"), ("IMAGE/PNG", png, "image/png"),
            ("application/xhtml+xml", markup, "application/octet-stream"),
            ("image/png", markup, "application/octet-stream"), ("text/html", png, "image/png"),
            ("text/csv", Array("a,b\n".utf8), "text/csv"),
        ]
        for (index, file) in sent.enumerated() {
            try body.append(.data(Data(file.bytes), name: "f", filename: "f\(index)", contentType: file.type))
        }
        let spooler = MultipartSpooler(
            store: try S3Store(configuration: peer.configuration(bucket: bucket)), limits: .untimed)
        let form = try await spooler.spool(chunkStream(try body.bytes(), size: 1 << 10), contentType: body.contentType)
        var stored: [String] = []
        for file in form.files {
            let head = try #require(try peer.s3api(["head-object", "--key", file.storedObject!.key], bucket: bucket))
            stored.append(head["ContentType"] as? String ?? "")
            #expect(head["ContentDisposition"] as? String == "attachment")
            let metadata = head["Metadata"] as? [String: String] ?? [:]
            #expect(metadata["content-type"]?.removingPercentEncoding == file.contentType)
        }
        #expect(stored == sent.map(\.stored))

        let hostile = Array(
            ("--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a\"\r\nContent-Type: text/pl\u{1}ain\r\n\r\n"
                + "x\r\n--B--\r\n").utf8)
        let empty = try peer.makeBucket()
        let refusing = MultipartSpooler(
            store: try S3Store(configuration: peer.configuration(bucket: empty)), limits: .untimed)
        await #expect {
            _ = try await refusing.spool(chunkStream(hostile, size: 64), contentType: "multipart/form-data; boundary=B")
        } throws: { error in
            let error = error as? MultipartError
            return error?.code == .invalidHeader && error?.httpStatus == 400 && error?.partIndex == 0
        }
        let contents = try peer.contents(of: empty)
        #expect(contents.keys.isEmpty && contents.uploads == 0)
    }

    @Test(.enabled(if: S3Peer.motoAvailable, "needs moto[server], boto3 and awscli (pip), the local S3 endpoint"))
    func staleUploadsUnderThePrefixAreAbortedInMoto() async throws {
        try await sweep(try S3Peer.shared(.moto), datesAreReal: false)
    }

    @Test(.enabled(if: S3Peer.radosgwAvailable, "needs Ceph (ceph-mon, ceph-osd, radosgw: apt) and awscli"))
    func staleUploadsUnderThePrefixAreAbortedInRadosgw() async throws {
        try await sweep(try S3Peer.shared(.radosgw), datesAreReal: true)
    }

    /// What a killed server leaves: open multipart uploads. The sweep aborts those past the age whose key has the
    /// store's own shape (its prefix and 32 hex digits), and nothing else: neither a younger upload, nor another
    /// application's key under the same prefix, nor one under a prefix that merely begins the same. Moto lists every
    /// upload as begun on one fixed day of 2010, so the age is checked against radosgw alone.
    func sweep(_ peer: S3Peer, datesAreReal: Bool) async throws {
        let bucket = try peer.makeBucket()
        let logs = InMemoryLogHandler()
        let logger = Logger(label: "s3", factory: { _ in logs })
        func store(prefix: String) throws -> S3Store {
            var configuration = try peer.configuration(bucket: bucket)
            configuration.prefix = prefix
            return try S3Store(configuration: configuration, logger: logger)
        }
        let hex = (0..<3).map { _ in S3Store.Configuration.randomName() }
        let ours = ["forms/" + hex[0], "forms/" + hex[1], "forms/\(hex[0])/\(hex[1])"]
        let others = [
            "forms/a", "forms/\(hex[2])/x", "forms/\(hex[2].uppercased())", "formsx/" + hex[2], "other/c",
            "backups/db.tar", "upload-archive/x.bin",
        ]
        for key in ours + others + [hex[2]] {
            _ = try peer.s3api(["create-multipart-upload", "--key", key], bucket: bucket)
        }
        if datesAreReal {
            #expect(
                try await store(prefix: "forms/").abortStaleUploads(olderThan: .seconds(3600)) == 0,
                "all are younger than an hour")
            #expect(try peer.contents(of: bucket).uploads == 11)
        }
        let later = Date().addingTimeInterval(120)
        #expect(try await store(prefix: "forms/").abortStaleUploads(olderThan: .seconds(60), now: later) == 3)
        // The default prefix "" sweeps the store's own keys at the bucket's root, never the rest of the bucket; a
        // prefix without its "/" never sweeps a neighbour it begins.
        #expect(try await store(prefix: "").abortStaleUploads(olderThan: .seconds(60), now: later) == 1)
        #expect(try await store(prefix: "up").abortStaleUploads(olderThan: .seconds(60), now: later) == 0)
        var keyed = try peer.configuration(bucket: bucket)
        keyed.key = { _ in "forms/a" }
        #expect(try await S3Store(configuration: keyed).abortStaleUploads(olderThan: .seconds(60), now: later) == 0)
        let left = try peer.s3api(["list-multipart-uploads"], bucket: bucket)?["Uploads"] as? [[String: Any]] ?? []
        #expect(left.compactMap { $0["Key"] as? String }.sorted() == others.sorted())
        let told = logs.entries.filter { "\($0.message)".contains("aborted a stale multipart upload") }
        #expect(Set(told.compactMap { $0.metadata["s3.key"]?.description }) == Set(ours + [hex[2]]))
    }

    /// What a server killed mid-form leaves: a finished file and an open upload, in the form's folder, beside its
    /// pending record. The next start's sweep leaves it while it is younger than the age (a server may still be
    /// sending it), then removes it whole: the upload, the object, the record. A committed form, a stray object
    /// in `.pending/` and another application's object are left alone.
    @Test(.enabled(if: S3Peer.motoAvailable, "needs moto[server], boto3 and awscli (pip), the local S3 endpoint"))
    func aFormAKilledServerLeftIsRemovedWholeByTheSweepInMoto() async throws {
        try await killedForm(try S3Peer.shared(.moto))
    }

    @Test(.enabled(if: S3Peer.radosgwAvailable, "needs Ceph (ceph-mon, ceph-osd, radosgw: apt) and awscli"))
    func aFormAKilledServerLeftIsRemovedWholeByTheSweepInRadosgw() async throws {
        try await killedForm(try S3Peer.shared(.radosgw))
    }

    func killedForm(_ peer: S3Peer) async throws {
        let bucket = try peer.makeBucket()
        let configuration = try peer.configuration(bucket: bucket)
        let body = try form()
        let committed = try await MultipartSpooler(store: try S3Store(configuration: configuration), limits: .untimed)
            .spool(chunkStream(try body.bytes(), size: 1 << 20), contentType: body.contentType)
        let kept = committed.files.compactMap { $0.storedObject?.key }.sorted()
        for key in ["forms/.pending/notes.txt", "other/keep.bin"] {
            _ = try peer.s3api(["put-object", "--key", key], bucket: bucket)
        }

        let killed = try S3Store(configuration: configuration)  // the server that dies mid-form
        let form = S3Store.Configuration.randomName()
        var thumb = MultipartStoreFile(name: "thumb", filename: "t.jpg", contentType: nil, partIndex: 1)
        thumb.form = form
        let finished = try await killed.begin(thumb)
        try await finished.append(MultipartBytes(Self.large.prefix(1000)))
        _ = try await finished.finish(byteCount: 1000, digest: nil)
        var video = thumb
        (video.name, video.partIndex) = ("video", 2)
        let open = try await killed.begin(video)
        try await open.append(MultipartBytes(Self.large.prefix(6 << 20)))  // one part up: an upload open
        var contents = try peer.contents(of: bucket)
        let left = contents.keys.filter { $0.hasPrefix("forms/\(form)") || $0 == "forms/.pending/\(form)" }
        #expect(left.count == 2 && contents.uploads == 1, "\(contents)")

        let restarted = try S3Store(configuration: configuration)
        _ = try await restarted.abortStaleUploads(olderThan: .seconds(3600))
        #expect(try peer.contents(of: bucket).keys == contents.keys, "a form younger than the age is left")
        let later = Date().addingTimeInterval(7200)
        #expect(try await restarted.abortStaleUploads(olderThan: .seconds(3600), now: later) >= 1)
        contents = try peer.contents(of: bucket)
        #expect(contents.keys == (kept + ["forms/.pending/notes.txt", "other/keep.bin"]).sorted())
        #expect(contents.uploads == 0)
    }

    /// The form into a bucket and back through awscli, with each part's checksum `checksum` and the spool's digest
    /// the same algorithm. moto keeps the checksums it is sent: the thumbnail's (one `PutObject`) must be the
    /// CRC-32C of its bytes, and the video's the CRC-32C of its three parts' CRC-32Cs ("-3"), which moto computes
    /// only when the multipart upload was begun as CRC-32C.
    func roundTrip(_ peer: S3Peer, checksum: S3Store.Configuration.Checksum) async throws {
        let bucket = try peer.makeBucket()
        let body = try form()
        var configuration = try peer.configuration(bucket: bucket)
        configuration.checksum = checksum
        let spooler = MultipartSpooler(
            store: try S3Store(configuration: configuration), limits: .untimed,
            digest: checksum == .sha256 ? SHA256Digest.self : CRC32CDigest.self)
        let form = try await spooler.spool(chunkStream(try body.bytes(), size: 64 << 10), contentType: body.contentType)
        #expect(form.value(of: "caption") == "Sunset")
        let keys = form.files.compactMap { $0.storedObject?.key }
        // Both in the form's folder (prefix, 32 hex digits, "/", 32 more); the form's pending record is gone.
        let folders = Set(keys.map { $0.prefix(6 + 33) })
        #expect(
            keys.count == 2 && folders.count == 1 && keys.allSatisfy { $0.hasPrefix("forms/") && $0.count == 6 + 65 })
        let contents = try peer.contents(of: bucket)
        #expect(contents.keys == keys.sorted() && contents.uploads == 0)
        // The video went up as a multipart upload of three parts (S3's ETag says how many), the thumbnail as one PUT.
        #expect(form.files[0].storedObject?.attributes["etag"]?.hasSuffix("-3\"") == true)
        #expect(form.files[1].storedObject?.attributes["etag"]?.contains("-") == false)

        let folder = try TemporaryFolder()
        defer { folder.remove() }
        for (file, expected) in zip(form.files, [Self.large, Array(Self.large.prefix(1000))]) {
            let key = file.storedObject!.key
            let head = try #require(try peer.s3api(["head-object", "--key", key], bucket: bucket))
            #expect(head["ContentLength"] as? Int == expected.count)
            let metadata = head["Metadata"] as? [String: String] ?? [:]
            #expect(metadata["filename"]?.removingPercentEncoding == file.filename)
            #expect(metadata["field"] == file.name)
            let copy = folder.url.appendingPathComponent("copy").path
            _ = try peer.s3api(["get-object", "--key", key, copy], bucket: bucket)
            let read = try [UInt8](Data(contentsOf: URL(fileURLWithPath: copy)))
            #expect(read == expected, "\(file.name) read back")
            #expect(file.digest?.hex == (checksum == .sha256 ? sha256Hex(read) : Self.crc32c(read).hex))
        }
        if checksum == .crc32c, peer.kind == .moto {
            let parts = stride(from: 0, to: Self.large.count, by: 5 << 20).map {
                Self.crc32c(Self.large[$0..<min($0 + 5 << 20, Self.large.count)])
            }
            func answered(_ key: String) throws -> String? {
                let head = try peer.s3api(["head-object", "--key", key, "--checksum-mode", "ENABLED"], bucket: bucket)
                return head?["ChecksumCRC32C"] as? String
            }
            // What S3 promises for a multipart upload begun with CRC-32C: the object's checksum is the CRC-32C of
            // its parts' CRC-32Cs, followed by the part count ("…-3"). moto 5.2.1 leaves the count off.
            let composite = Data(Self.crc32c(parts.flatMap(\.bytes)).bytes).base64EncodedString()
            let video = try answered(keys[0])
            #expect(video == composite + "-3" || video == composite, "the video's composite CRC-32C")
            #expect(try answered(keys[1]) == Data(Self.crc32c(Self.large.prefix(1000)).bytes).base64EncodedString())
        }
        #expect(
            try peer.s3api(["head-object", "--key", keys[0]], bucket: bucket)?["ContentType"] as? String == "video/mp4")
    }

    /// The CRC-32C of `bytes`, its four bytes most significant first and in hex.
    static func crc32c(_ bytes: some Collection<UInt8>) -> (bytes: [UInt8], hex: String) {
        var digest = CRC32CDigest()
        let whole = Array(bytes)[...]
        digest.update(whole.span)
        let value = digest.finalize()
        return (value, value.map { String(format: "%02x", $0) }.joined())
    }

    func failures(_ peer: S3Peer) async throws {
        let bucket = try peer.makeBucket()
        let body = try form()
        let bytes = try body.bytes()
        let store = try S3Store(configuration: peer.configuration(bucket: bucket))

        // The client goes away inside the video, after parts went up: the upload is aborted.
        let spooler = MultipartSpooler(store: store, limits: .untimed)
        await #expect(throws: DroppedBody.Reset.self) {
            _ = try await spooler.spool(
                DroppedBody(bytes: Array(bytes.prefix(11 << 20))), contentType: body.contentType)
        }
        var contents = try peer.contents(of: bucket)
        #expect(contents.keys.isEmpty && contents.uploads == 0, "after a dropped client")

        // Cut after the video, inside the thumbnail: the finished video is deleted.
        await #expect(throws: MultipartError.self) {
            _ = try await spooler.spool(
                chunkStream(Array(bytes.prefix(bytes.count - 500)), size: 1 << 20), contentType: body.contentType)
        }
        contents = try peer.contents(of: bucket)
        #expect(contents.keys.isEmpty && contents.uploads == 0, "after a cut body")

        // A limit breached mid-file.
        var limits = MultipartSpooler.Limits.untimed
        limits.maxDiskBytes = 7 << 20
        await #expect(throws: MultipartError.self) {
            _ = try await MultipartSpooler(store: store, limits: limits).spool(
                chunkStream(bytes, size: 1 << 20), contentType: body.contentType)
        }
        contents = try peer.contents(of: bucket)
        #expect(contents.keys.isEmpty && contents.uploads == 0, "after a limit")

        // The task cancelled while parts are in flight.
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        continuation.yield(Array(bytes.prefix(11 << 20)))  // and then nothing: the body stalls
        let spool = Task { try await spooler.spool(stream, contentType: body.contentType) }
        for _ in 0..<500 {
            if (try peer.contents(of: bucket).uploads) > 0 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        spool.cancel()
        continuation.finish()
        await #expect(throws: (any Error).self) { _ = try await spool.value }
        contents = try peer.contents(of: bucket)
        #expect(contents.keys.isEmpty && contents.uploads == 0, "after a cancelled task")
    }

    /// Moto, a bucket of the test's own, and Tests/Peers/flaky_s3.py in front of moto failing requests by `mode`
    /// (nil: each part's first try); and a store's configuration for that bucket through the proxy, its retries
    /// `attempts` (the default's 3 when nil) 1 ms apart.
    static func flakyMoto(_ mode: String? = nil, attempts: Int? = nil) throws -> (
        S3Peer, String, PeerUploadServer, S3Store.Configuration
    ) {
        let peer = try S3Peer.shared(.moto)
        let bucket = try peer.makeBucket()
        let flaky = try PeerUploadServer(
            python: try #require(executableOnPath("python3")), script: "flaky_s3.py",
            arguments: [String(peer.endpoint.port!)] + (mode.map { [$0] } ?? []))
        var configuration = try peer.configuration(bucket: bucket)
        configuration.endpoint = URL(string: "http://127.0.0.1:\(flaky.port)")!
        configuration.retry.initialDelay = .milliseconds(1)
        if let attempts { configuration.retry.attempts = attempts }
        return (peer, bucket, flaky, configuration)
    }

    /// Every part's first try fails with a 500 (Tests/Peers/flaky_s3.py before moto): each is sent again from the
    /// bytes held, and the object reads back whole.
    @Test(.enabled(if: S3Peer.motoAvailable, "needs moto[server], boto3 and awscli (pip), the local S3 endpoint"))
    func aFailedPartIsSentAgain() async throws {
        let (peer, bucket, flaky, configuration) = try Self.flakyMoto()
        let body = try form()
        let form = try await MultipartSpooler(store: try S3Store(configuration: configuration), limits: .untimed)
            .spool(chunkStream(try body.bytes(), size: 1 << 20), contentType: body.contentType)
        let key = try #require(form.files.first?.storedObject?.key)
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let copy = folder.url.appendingPathComponent("video").path
        _ = try peer.s3api(["get-object", "--key", key, copy], bucket: bucket)
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: copy))) == Self.large)
        try flaky.input.fileHandleForWriting.close()
        let failed = String(decoding: flaky.output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(failed.trimmingCharacters(in: .whitespacesAndNewlines) == "3", "three parts failed once each")
        #expect(try peer.contents(of: bucket).uploads == 0)
    }

    /// What an operator sees of that form: its spans nest form → file → part (each part's span inside its file's,
    /// though a part goes up in a task of its own), and the store counts the three retries, times the three parts
    /// and counts the bytes S3 acknowledged.
    @Test(.enabled(if: S3Peer.motoAvailable, "needs moto[server], boto3 and awscli (pip), the local S3 endpoint"))
    func aFormsSpansNestFormFilePartAndTheStoreCountsItsRetries() async throws {
        let tracer = InMemoryTracer()
        let metrics = TestMetrics()
        let (_, _, flaky, configuration) = try Self.flakyMoto()
        let body = try form()
        let spooler = try withMetricsFactory(metrics) {
            MultipartSpooler(store: try S3Store(configuration: configuration), limits: .untimed)
        }
        let root = try await withTracer(tracer) {
            try await withSpan("test.root") { root in
                _ = try await spooler.spool(
                    chunkStream(try body.bytes(), size: 1 << 20), contentType: body.contentType)
                return root.context.inMemorySpanContext!
            }
        }
        let spans = tracer.finishedSpans
        let form = try #require(spans.first { $0.operationName == MultipartMetrics.formSpan })
        #expect(form.parentSpanID == root.spanID)
        let files = spans.filter { $0.operationName == MultipartMetrics.fileSpan }
        #expect(files.count == 2 && files.allSatisfy { $0.parentSpanID == form.spanID })
        let video = try #require(files.first { $0.attributes["multipart.part_index"]?.toSpanAttribute() == .int64(1) })
        let parts = spans.filter { $0.operationName == MultipartMetrics.s3PartSpan }
        #expect(parts.count == 3 && parts.allSatisfy { $0.parentSpanID == video.spanID })
        let numbers = parts.compactMap { $0.attributes["s3.part_number"]?.toSpanAttribute() }
        #expect(numbers.count == 3 && [1, 2, 3].allSatisfy { numbers.contains(.int64($0)) })

        #expect(metrics.counterTotal(label: MultipartMetrics.s3Retries) == 3)
        #expect(try metrics.expectTimer(MultipartMetrics.s3PartDuration).values.count == 3)
        let stored = Int64(Self.large.count + 1000)  // the video's parts and the thumbnail's PutObject
        #expect(metrics.counterTotal(label: MultipartMetrics.bytesStored) == stored)
        #expect(metrics.counterTotal(label: MultipartMetrics.bytesSpooled) == stored)
        #expect(metrics.counterTotal(label: MultipartMetrics.uploadsCompleted) == 1)
        try flaky.input.fileHandleForWriting.close()
    }

    /// Every try of every part fails: after its retries the form fails as the store unavailable (503, S3's last error
    /// its cause), and nothing is left.
    @Test(.enabled(if: S3Peer.motoAvailable, "needs moto[server], boto3 and awscli (pip), the local S3 endpoint"))
    func aPartThatKeepsFailingAbortsTheUpload() async throws {
        let (peer, bucket, flaky, configuration) = try Self.flakyMoto("always", attempts: 2)
        let body = try form()
        do {
            _ = try await MultipartSpooler(store: try S3Store(configuration: configuration), limits: .untimed).spool(
                chunkStream(try body.bytes(), size: 1 << 20), contentType: body.contentType)
            Issue.record("a part that always fails was taken")
        } catch let error as MultipartError {
            let cause = try #require(error.cause as? S3Error, "\(error)")
            #expect(error.code == .storeUnavailable && error.partIndex == 1 && error.httpStatus == 503)
            #expect(cause.serviceCode == "InternalError" && cause.status == 500 && cause.requestID == "f1")
        }
        let contents = try peer.contents(of: bucket)
        #expect(contents.keys.isEmpty && contents.uploads == 0)
        try flaky.input.fileHandleForWriting.close()
    }

    /// A store whose abort fails too leaves the upload open, and says so in the store's log with the form's metadata
    /// (the request id a server product's logger carries), so that the warning leads back to the request.
    @Test(.enabled(if: S3Peer.motoAvailable, "needs moto[server], boto3 and awscli (pip), the local S3 endpoint"))
    func anUploadLeftOpenIsLoggedWithTheFormsRequestID() async throws {
        let (_, _, flaky, configuration) = try Self.flakyMoto("always-no-abort", attempts: 2)
        let storeLogs = InMemoryLogHandler()
        let store = try S3Store(configuration: configuration, logger: Logger(label: "s3") { _ in storeLogs })
        var requestLogger = Logger(label: "request") { _ in InMemoryLogHandler() }  // a handler that keeps metadata
        requestLogger[metadataKey: "request-id"] = "r-42"
        var spooler = MultipartSpooler(store: store, limits: .untimed)
        spooler.logger = requestLogger
        let body = try form()
        await #expect(throws: MultipartError.self) {
            _ = try await spooler.spool(chunkStream(try body.bytes(), size: 1 << 20), contentType: body.contentType)
        }
        let leftOpen = storeLogs.entries.filter { "\($0.message)".contains("left open") }
        #expect(leftOpen.count == 1, "\(storeLogs.entries.map(\.message))")
        #expect(leftOpen.first?.metadata["request-id"] == "r-42" && leftOpen.first?.metadata["s3.upload_id"] != nil)
        #expect(leftOpen.first?.level == .warning)
        try flaky.input.fileHandleForWriting.close()
    }

    /// S3 may answer CompleteMultipartUpload with 200 and an error in its body: the form fails with it, and the
    /// upload, still open, is aborted.
    @Test(.enabled(if: S3Peer.motoAvailable, "needs moto[server], boto3 and awscli (pip), the local S3 endpoint"))
    func aCompletionThatFailsInItsBodyIsAborted() async throws {
        let (peer, bucket, flaky, configuration) = try Self.flakyMoto("complete-error")
        let body = try form()
        do {
            _ = try await MultipartSpooler(store: try S3Store(configuration: configuration), limits: .untimed).spool(
                chunkStream(try body.bytes(), size: 1 << 20), contentType: body.contentType)
            Issue.record("a failed completion was taken")
        } catch let error as MultipartError {
            let cause = try #require(error.cause as? S3Error, "\(error)")
            #expect(cause.serviceCode == "InternalError" && cause.requestID == "f2")
            // As S3 answered: 200, and the request's URL (not a made-up 500 and the bare key).
            #expect(cause.status == 200 && cause.message.hasPrefix("POST http://127.0.0.1:\(flaky.port)/\(bucket)/"))
            #expect(S3Retry.isTransient(cause), "retried, as the SDKs retry a completion that failed late")
        }
        let contents = try peer.contents(of: bucket)
        #expect(contents.keys.isEmpty && contents.uploads == 0)
    }

    /// S3 stores the object and the answer is lost, at every try of a `PutObject` and of a completion: the form fails
    /// as the store unavailable, and the objects S3 did store are deleted, not left in the bucket of a form the
    /// client was told failed (the fault harness found the completion's: a retry then meets `NoSuchUpload`). A try
    /// whose answer never came may still land after that delete (the fault harness saw a completion do so), so the
    /// form's pending record stays, and the sweep removes whatever landed.
    @Test(.enabled(if: S3Peer.motoAvailable, "needs moto[server], boto3 and awscli (pip), the local S3 endpoint"))
    func objectsStoredWhoseAnswersWereLostAreDeleted() async throws {
        let (peer, bucket, flaky, configuration) = try Self.flakyMoto("lost-answers", attempts: 2)
        var small = MultipartBody()
        try small.append(.data(Data(Self.large.prefix(1000)), name: "thumb", filename: "t.jpg"))
        for body in [small, try form()] {  // a PutObject, then a multipart upload's completion
            await #expect {
                _ = try await MultipartSpooler(store: try S3Store(configuration: configuration), limits: .untimed)
                    .spool(chunkStream(try body.bytes(), size: 1 << 20), contentType: body.contentType)
            } throws: { error in
                (error as? MultipartError)?.code == .storeUnavailable && (error as? MultipartError)?.httpStatus == 503
            }
            let contents = try peer.contents(of: bucket)
            #expect(
                contents.keys.count == 1 && contents.keys[0].hasPrefix("forms/.pending/") && contents.uploads == 0,
                "\(contents)")
            #expect(try await S3Store(configuration: configuration).abortStaleUploads(olderThan: .zero) == 1)
            #expect(try peer.contents(of: bucket).keys.isEmpty)
        }
        try flaky.input.fileHandleForWriting.close()
    }

    @Test(.enabled(if: S3Peer.motoAvailable, "needs moto[server], boto3 and awscli (pip), the local S3 endpoint"))
    func aMissingBucketArrivesTyped() async throws {
        let peer = try S3Peer.shared(.moto)
        let configuration = try peer.configuration(bucket: "no-such-bucket")
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

    /// moto takes any secret; radosgw checks the signature, and its refusal arrives as a typed error.
    @Test(.enabled(if: S3Peer.radosgwAvailable, "needs Ceph (ceph-mon, ceph-osd, radosgw: apt) and awscli"))
    func aWrongSecretIsRefusedByRadosgw() async throws {
        let peer = try S3Peer.shared(.radosgw)
        var configuration = try peer.configuration(bucket: try peer.makeBucket())
        var wrong = peer.credentials
        wrong.secretAccessKey += "x"
        configuration.credentials = .static(wrong)
        let body = try form()
        do {
            _ = try await MultipartSpooler(store: try S3Store(configuration: configuration), limits: .untimed).spool(
                chunkStream(try body.bytes(), size: 1 << 20), contentType: body.contentType)
            Issue.record("radosgw took a request signed with the wrong secret")
        } catch let error as MultipartError {
            let cause = try #require(error.cause as? S3Error, "\(error)")
            #expect(cause.code == .service && cause.serviceCode == "SignatureDoesNotMatch" && cause.status == 403)
            #expect(cause.requestID?.isEmpty == false, "radosgw's request id")
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
