import Foundation
import Testing

/// moto's S3 on a free port of 127.0.0.1 with one bucket (the repository's Tests/Peers/s3_moto.py); it ends when
/// this object goes away.
final class MotoServer {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tests/Peers/s3_moto.py").path
    static var available: Bool {
        guard let python = onPath("python3"), onPath("aws") != nil,
            let result = try? runWaiting(python, ["-c", "import moto.server, boto3, requests"])
        else { return false }
        return result.status == 0
    }
    static let credentials = [
        "AWS_ACCESS_KEY_ID": "moto", "AWS_SECRET_ACCESS_KEY": "moto", "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true",
    ]

    let process = Process()
    let input = Pipe()
    let bucket = "uploads-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    let endpoint: String

    init() throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: try #require(onPath("python3")))
        process.arguments = [Self.script, bucket]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data([10]) {
            line += byte
        }
        let port = try #require(Int(String(decoding: line, as: UTF8.self)), "moto printed no port")
        endpoint = "http://127.0.0.1:\(port)"
    }

    /// `aws s3api COMMAND ARGUMENTS --bucket BUCKET`, its JSON answer (empty for none).
    func s3api(_ arguments: [String]) async throws -> [String: Any] {
        let command =
            Self.credentials.map { "\($0.key)=\($0.value)" }
            + [try #require(onPath("aws")), "--endpoint-url", endpoint, "--output", "json", "s3api"] + arguments
            + ["--bucket", bucket]
        let result = try await run("/usr/bin/env", command)
        try #require(result.status == 0, "aws s3api \(arguments): \(result.errors)")
        let text = result.text.trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty
            ? [:] : try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    deinit {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

/// Two servers behind one imaginary balancer store into one bucket (`--store s3://…`): uploads across both, some
/// cut mid-body, leave exactly the whole ones in the bucket, each with the SHA-256 it was sent with, read back
/// through awscli, and no multipart upload.
@Suite struct S3StoreTests {
    static let scenario = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/s3_two_servers.py").path

    @Test(
        .enabled(if: MotoServer.available, "needs moto[server], boto3, requests and awscli (pip)"),
        .timeLimit(.minutes(5)))
    func twoServersOneBucketNothingLeftOfTheCutUploads() async throws {
        let moto = try MotoServer()
        let arguments = [
            "--store", "s3://\(moto.bucket)/forms/", "--s3-endpoint", moto.endpoint, "--s3-part-size", "5242880",
            "--s3-concurrency", "2",
        ]
        let servers = try (0..<2).map { _ in
            try RunningServer(arguments: arguments, environment: MotoServer.credentials)
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

        let objects = try await moto.s3api(["list-objects-v2"])["Contents"] as? [[String: Any]] ?? []
        #expect(Set(objects.compactMap { $0["Key"] as? String }) == Set(sent.keys), "the bucket holds the 15 alone")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("s3-read-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for (key, sha) in sent {
            let copy = folder.appendingPathComponent("object").path
            _ = try await moto.s3api(["get-object", "--key", key, copy])
            #expect(sha256(try [UInt8](Data(contentsOf: URL(fileURLWithPath: copy)))) == sha, "\(key) read back")
        }
        // A cut upload is aborted by the server that had it as soon as it sees the connection go; give the
        // servers a moment to get there.
        var uploadsLeft = -1
        for _ in 0..<100 {
            uploadsLeft = (try await moto.s3api(["list-multipart-uploads"])["Uploads"] as? [Any])?.count ?? 0
            if uploadsLeft == 0 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(uploadsLeft == 0, "multipart uploads left in the bucket")
    }
}
