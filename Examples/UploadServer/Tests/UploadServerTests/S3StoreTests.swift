import ExampleTestSupport
import Foundation
import Testing

/// An S3 endpoint with one fresh bucket, from the repository's Tests/Peers: moto (`s3_moto.py`) or Ceph's radosgw
/// on a one-node cluster (`radosgw.py`). Each kind's peer starts once for the test process, at first use (a one-node
/// Ceph takes a minute or two to come up), and each endpoint is a bucket of its own on it, so that tests running side
/// by side see only their own objects and uploads; the peer stops when the test process ends (its standard input
/// closes).
struct S3Endpoint: Sendable {
    enum Kind: String, Sendable { case moto, radosgw }

    static let peers = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tests/Peers")
    static func python(importing modules: String) -> Bool {
        guard let python = onPath("python3"), onPath("aws") != nil,
            let result = try? runWaiting(python, ["-c", "import \(modules)"])
        else { return false }
        return result.status == 0
    }
    static var motoAvailable: Bool { python(importing: "moto.server, boto3, requests") }
    static var radosgwAvailable: Bool {
        python(importing: "boto3, requests")
            && ["ceph-mon", "ceph-osd", "radosgw", "radosgw-admin"].allSatisfy { onPath($0) != nil }
    }

    /// Each kind's peer, started at first use (Swift runs a static's initializer once, other callers waiting).
    private static let moto = Result { try Peer(.moto) }
    private static let radosgw = Result { try Peer(.radosgw) }

    let bucket = "uploads-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    let endpoint: String
    /// The credentials, as the servers and awscli take them.
    let environment: [String: String]

    /// A new bucket on `kind`'s peer, which starts first if this is its first use. Blocks: call it off the pool.
    init(_ kind: Kind) throws {
        let peer = try (kind == .moto ? Self.moto : Self.radosgw).get()
        (endpoint, environment) = (peer.endpoint, peer.environment)
        let made = try runWaiting("/usr/bin/env", awsCommand(["create-bucket"]))
        try #require(made.status == 0, "create-bucket: \(made.errors)")
    }

    private func awsCommand(_ arguments: [String]) -> [String] {
        environment.map { "\($0.key)=\($0.value)" } + [onPath("aws") ?? "aws", "--endpoint-url", endpoint]
            + ["--output", "json", "s3api"] + arguments + ["--bucket", bucket]
    }

    /// `aws s3api COMMAND ARGUMENTS --bucket BUCKET`, its JSON answer (empty for none).
    func s3api(_ arguments: [String]) async throws -> [String: Any] {
        let result = try await run("/usr/bin/env", awsCommand(arguments))
        try #require(result.status == 0, "aws s3api \(arguments): \(result.errors)")
        let text = result.text.trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty
            ? [:] : try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// One peer process, serving until the test process ends: then its standard input closes and the script stops
    /// what it started (radosgw.py its Ceph daemons) and removes its folder.
    private final class Peer: @unchecked Sendable {  // its state is set in init and only read after
        let process = Process()
        let input = Pipe()
        let endpoint: String
        let environment: [String: String]

        init(_ kind: Kind) throws {
            let output = Pipe()
            process.executableURL = URL(fileURLWithPath: try #require(onPath("python3")))
            let script = kind == .moto ? "s3_moto.py" : "radosgw.py"
            process.arguments = [S3Endpoint.peers.appendingPathComponent(script).path]
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let line = try firstLine(of: process, from: output, within: 600)  // a one-node Ceph takes a minute or two
            let access: String
            let secret: String
            switch kind {
            case .moto:
                let port = try #require(Int(String(decoding: line, as: UTF8.self)), "moto printed no port")
                (endpoint, access, secret) = ("http://127.0.0.1:\(port)", "moto", "moto")
            case .radosgw:
                let started = try #require(try JSONSerialization.jsonObject(with: line) as? [String: String])
                endpoint = try #require(started["endpoint"])
                access = try #require(started["access"])
                secret = try #require(started["secret"])
            }
            environment = [
                "AWS_ACCESS_KEY_ID": access, "AWS_SECRET_ACCESS_KEY": secret, "AWS_REGION": "us-east-1",
                "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true",
            ]
        }
    }
}

/// Runs `work`, which blocks (starting moto or a server and reading its first line), on a thread of its own: on
/// the concurrency pool's two threads it would stall the other tests' tasks (a client's body stalled 10 s became a
/// 408 in a loaded run).
func offPool<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Swift.Result { try work() }) }.start()
    }
}

/// Two servers behind one imaginary balancer store into one bucket (`--store s3://…`): uploads across both, some
/// cut mid-body, leave exactly the whole ones in the bucket, each with the SHA-256 it was sent with, read back
/// through awscli, and no multipart upload.
@Suite(.timeLimit(.minutes(5))) struct S3StoreTests {
    static let scenario = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/s3_two_servers.py").path

    @Test(.enabled(if: S3Endpoint.motoAvailable, "needs moto[server], boto3, requests and awscli (pip)"))
    func twoServersOneMotoBucket() async throws {
        try await twoServersOneBucket(try await offPool { try S3Endpoint(.moto) })
    }

    @Test(.enabled(if: S3Endpoint.radosgwAvailable, "needs Ceph's radosgw (apt), boto3, requests and awscli (pip)"))
    func twoServersOneRadosgwBucket() async throws {
        try await twoServersOneBucket(try await offPool { try S3Endpoint(.radosgw) })
    }

    func twoServersOneBucket(_ store: S3Endpoint) async throws {
        // `forms` without its "/" is a folder too, as `aws s3 cp --recursive` reads it: the keys are `forms/…`.
        let arguments = [
            "--store", "s3://\(store.bucket)/forms", "--s3-endpoint", store.endpoint, "--s3-part-size", "5242880",
            "--s3-concurrency", "2",
        ]
        let servers = try await offPool {
            try (0..<2).map { _ in try RunningServer(arguments: arguments, environment: store.environment) }
        }
        defer { for server in servers { server.stop() } }

        let python = try #require(onPath("python3"))
        let result = try await run(
            python, [Self.scenario, String(servers[0].port), String(servers[1].port), "20", "4"])
        try #require(result.status == 0, "\(result.errors)")
        let report = try #require(try JSONSerialization.jsonObject(with: result.output) as? [String: Any])
        let uploads = try #require(report["uploads"] as? [[String: Any]])
        #expect(report["cut"] as? Int == 5 && uploads.count == 15)

        var sent: [String: String] = [:]  // key: the SHA-256 the client sent
        for upload in uploads {
            #expect(upload["status"] as? Int == 200, "\(upload)")
            let answer = upload["answer"] as? [String: Any]
            let file = try #require((answer?["files"] as? [[String: Any]])?.first, "\(upload)")
            let key = try #require(file["key"] as? String)
            #expect(key.hasPrefix("forms/") && file["sha256"] as? String == upload["sha256"] as? String)
            #expect(file["size"] as? Int == upload["size"] as? Int)
            sent[key] = upload["sha256"] as? String
        }
        #expect(sent.count == 15, "every key distinct")

        // A cut upload is cleaned up by the server that had it as soon as it sees the connection go (its upload
        // aborted, its finished files and its form's pending record deleted); give the servers a moment to get there.
        var keys: Set<String> = []
        var uploadsLeft = -1
        for _ in 0..<100 {
            let objects = try await store.s3api(["list-objects-v2"])["Contents"] as? [[String: Any]] ?? []
            keys = Set(objects.compactMap { $0["Key"] as? String })
            uploadsLeft = (try await store.s3api(["list-multipart-uploads"])["Uploads"] as? [Any])?.count ?? 0
            if keys == Set(sent.keys) && uploadsLeft == 0 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(keys == Set(sent.keys), "the bucket holds the 15 alone")
        #expect(uploadsLeft == 0, "multipart uploads left in the bucket")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("s3-read-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for (key, sha) in sent {
            let copy = folder.appendingPathComponent("object").path
            _ = try await store.s3api(["get-object", "--key", key, copy])
            #expect(sha256(try [UInt8](Data(contentsOf: URL(fileURLWithPath: copy)))) == sha, "\(key) read back")
        }
    }

    /// Fifty uploads that each send 7.5 MiB at once and then trickle 2 KiB a second, all admitted
    /// (`--max-uploads 50`), into moto with a memory budget of 48 MiB: the uploads that find no room wait, then get
    /// 503; the server's peak memory stays within its idle size plus the budget and a margin for everything else
    /// (NIO's buffers, the answers, the allocator's slack), where it grew by 364 MB without the budget.
    @Test(.enabled(if: S3Endpoint.motoAvailable, "needs moto[server], boto3, requests and awscli (pip)"))
    func slowUploadsStayWithinTheMemoryBudget() async throws {
        let store = try await offPool { try S3Endpoint(.moto) }
        let budget = 48 << 20
        let server = try await offPool {
            try RunningServer(
                arguments: [
                    "--store", "s3://\(store.bucket)/forms/", "--s3-endpoint", store.endpoint, "--s3-part-size",
                    "5242880",
                    "--s3-concurrency", "2", "--s3-memory", String(budget), "--s3-memory-wait", "3", "--max-uploads",
                    "50",
                    "--digest", "none",
                ], environment: store.environment)
        }
        defer { server.stop() }
        let idle = try #require(server.residentKiB())
        let report = try await HostileClientTests.scenario(
            "big-then-trickle", on: server, ["--connections", "50", "--hold", "8"])
        let statuses = try #require(report["statuses"] as? [String: Int])
        #expect(Set(statuses.keys).isSubset(of: ["200", "503"]), "\(statuses)")
        #expect((statuses["200"] ?? 0) > 0 && (statuses["503"] ?? 0) > 0, "\(statuses)")
        let peak = try #require(server.peakResidentKiB())
        print(
            "UploadServer in S3 mode, 50 slow uploads, a 48 MiB budget: idle \(idle) KiB, peak \(peak) KiB, \(statuses)"
        )
        let margin = 64 << 10  // KiB
        #expect(peak - idle <= budget / 1024 + margin, "peak \(peak) KiB, idle \(idle) KiB")
    }

    @Test(.enabled(if: S3Endpoint.motoAvailable, "needs moto[server], boto3, requests and awscli (pip)"))
    func aKilledServersOpenUploadIsAbortedByTheNextOneInMoto() async throws {
        try await aKilledServersOpenUploadIsAbortedByTheNextOne(try await offPool { try S3Endpoint(.moto) })
    }

    @Test(.enabled(if: S3Endpoint.radosgwAvailable, "needs Ceph's radosgw (apt), boto3, requests and awscli (pip)"))
    func aKilledServersOpenUploadIsAbortedByTheNextOneInRadosgw() async throws {
        try await aKilledServersOpenUploadIsAbortedByTheNextOne(try await offPool { try S3Endpoint(.radosgw) })
    }

    /// A server killed with SIGKILL during a 200 MiB upload leaves its multipart upload open in the bucket, and its
    /// form's pending record; the next server to start removes the form whole (`--s3-stale-after 0`: any form and
    /// upload begun before it started; moto dates every upload in 2010, radosgw with the clock).
    func aKilledServersOpenUploadIsAbortedByTheNextOne(_ store: S3Endpoint) async throws {
        let arguments = [
            "--store", "s3://\(store.bucket)/forms/", "--s3-endpoint", store.endpoint, "--s3-part-size", "5242880",
        ]
        let first = try await offPool { try RunningServer(arguments: arguments, environment: store.environment) }
        let client = Task {
            // It ends when the server dies under it: what it reports does not matter.
            _ = try? await HostileClientTests.scenario(
                "big-then-trickle", on: first, ["--connections", "1", "--hold", "30", "--size", String(200 << 20)])
        }
        func openUploads() async throws -> Int {
            (try await store.s3api(["list-multipart-uploads"])["Uploads"] as? [Any])?.count ?? 0
        }
        var open = 0
        for _ in 0..<100 where open == 0 {
            try await Task.sleep(for: .milliseconds(100))
            open = try await openUploads()
        }
        try #require(open == 1, "the first part went up: the upload is open")
        kill(first.process.processIdentifier, SIGKILL)
        first.stop()
        await client.value
        #expect(try await openUploads() == 1, "a killed server cleans up nothing")
        func keys() async throws -> [String] {
            (try await store.s3api(["list-objects-v2"])["Contents"] as? [[String: Any]] ?? []).compactMap {
                $0["Key"] as? String
            }
        }
        let left = try await keys()
        #expect(left.count == 1 && left[0].hasPrefix("forms/.pending/"), "the form's pending record: \(left)")

        let next = try await offPool {
            try RunningServer(arguments: arguments + ["--s3-stale-after", "0"], environment: store.environment)
        }
        defer { next.stop() }
        #expect(try await openUploads() == 0, "swept before the server listens")
        #expect(try await keys().isEmpty, "the form's record swept with it")
    }
}
