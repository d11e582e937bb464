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
///
/// A hash of your own (64-bit FNV-1a here, a checksum rather than a cryptographic hash):
///
/// ```swift
/// struct FNV1a: SpoolDigest {
///     static var algorithm: String { "fnv-1a-64" }
///     private var hash: UInt64 = 0xcbf2_9ce4_8422_2325
///
///     mutating func update(_ bytes: Span<UInt8>) {
///         for index in bytes.indices { hash = (hash ^ UInt64(bytes[index])) &* 0x100_0000_01b3 }
///     }
///
///     mutating func finalize() -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: hash >> (56 - 8 * $0)) } }
/// }
/// ```
public protocol SpoolDigest: Sendable {
    /// The algorithm's name as reports give it, e.g. `"sha-256"`.
    static var algorithm: String { get }

    /// A hash of no bytes yet.
    init()

    /// Adds the next bytes.
    mutating func update(_ bytes: Span<UInt8>)

    /// The hash of every byte added.
    mutating func finalize() -> [UInt8]
}

extension SpoolDigest {
    /// Adds the next bytes of a chunk.
    mutating func update(_ bytes: ArraySlice<UInt8>) {
        update(bytes.span)
    }
}
