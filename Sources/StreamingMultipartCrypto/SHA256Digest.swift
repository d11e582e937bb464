import Crypto
public import StreamingMultipart

/// SHA-256 from swift-crypto (BoringSSL's assembly on Linux, CryptoKit on Apple platforms), for the files a
/// `MultipartSpooler` spools.
///
/// A product of its own so that only an app that hashes compiles swift-crypto.
///
/// ```swift
/// import StreamingMultipart
/// import StreamingMultipartCrypto
///
/// let spooler = MultipartSpooler(directory: "/var/spool/uploads", digest: SHA256Digest.self)
/// let form = try await spooler.spool(body, contentType: contentType)
/// print(form.files.first?.digest?.hex ?? "")   // as sha256sum prints it
/// ```
public struct SHA256Digest: SpoolDigest {
    public static var algorithm: String { "sha-256" }

    private var hash = SHA256()

    public init() {}

    public mutating func update(_ bytes: Span<UInt8>) {
        hash.update(bytes)
    }

    public mutating func finalize() -> [UInt8] {
        Array(hash.finalize())
    }
}
