import Foundation
import StreamingMultipart
import StreamingMultipartS3

/// A spooler whose parts and files carry CRC-32C: no SHA-256 anywhere, for an https endpoint.
func makeFastSpooler() throws -> MultipartSpooler {
    var configuration = try S3Store.Configuration(
        endpoint: URL(string: "https://s3.eu-west-3.amazonaws.com")!, bucket: "uploads", credentials: .default())
    configuration.checksum = .crc32c
    return MultipartSpooler(store: try S3Store(configuration: configuration), digest: CRC32CDigest.self)
}
