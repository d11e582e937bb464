import Foundation
import StreamingMultipart
import StreamingMultipartCrypto
import StreamingMultipartS3

/// Spools a form into the bucket and answers each file's key and SHA-256.
func storeUpload<Body: AsyncSequence>(_ body: sending Body, contentType: String) async throws -> [String: String]
where Body.Element: MultipartChunk {
    var configuration = try S3Store.Configuration(
        endpoint: URL(string: "http://127.0.0.1:7480")!, bucket: "uploads", prefix: "forms/",
        region: "us-east-1", credentials: .default())
    configuration.partSize = 16 << 20  // at least 5 MiB
    configuration.concurrency = 4  // parts of one file in flight
    let spooler = MultipartSpooler(store: try S3Store(configuration: configuration), digest: SHA256Digest.self)
    let form = try await spooler.spool(body, contentType: contentType)
    var keys: [String: String] = [:]
    for file in form.files {
        keys[file.storedObject?.key ?? "(in memory)"] = file.digest?.hex
    }
    return keys
}
