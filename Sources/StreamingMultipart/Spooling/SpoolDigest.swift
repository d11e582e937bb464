/// A hash of each spooled file, computed as its bytes stream to disk (no second read). `Sendable`, because the
/// spooler hashes a batch on another thread while it writes the batch.
///
/// The core has no hash of its own, so that an app that only builds or parses never compiles a cryptography
/// library. The `StreamingMultipartCrypto` product gives `SHA256Digest`, backed by swift-crypto; any other hash fits
/// this protocol in a few lines.
///
/// ```swift
/// import StreamingMultipartCrypto
///
/// let spooler = MultipartSpooler(directory: uploads, digest: SHA256Digest.self)
/// ```
public protocol SpoolDigest: Sendable {
    /// The algorithm's name as reports give it, e.g. `"sha-256"`.
    static var algorithm: String { get }

    /// A hash of no bytes yet.
    init()

    /// Adds the next bytes.
    mutating func update(_ bytes: UnsafeRawBufferPointer)

    /// The hash of every byte added.
    mutating func finalize() -> [UInt8]
}

extension SpoolDigest {
    /// Adds the next bytes of a chunk.
    mutating func update(_ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBytes { update($0) }
    }
}
