/// CRC-32C (Castagnoli) of each spooled file: the checksum S3 takes as `x-amz-checksum-crc32c`, computed on the
/// processor's CRC instructions (SSE 4.2 on x86-64, the CRC extension on ARMv8) at memory speed, where SHA-256 runs
/// at a fraction of it. An integrity check against accidents (a torn write, a flipped bit), not against an
/// attacker: anyone can make two files with one CRC.
///
/// ```swift
/// let spooler = MultipartSpooler(directory: "/var/spool/uploads", digest: CRC32CDigest.self)
/// let form = try await spooler.spool(body, contentType: contentType)
/// print(form.files.first?.digest?.hex ?? "")   // "e3069283" for the bytes "123456789"
/// ```
///
/// ``finalize()`` gives the four bytes most significant first, as S3 base64-encodes them.
public struct CRC32CDigest: SpoolDigest {
    public static var algorithm: String { "crc32c" }

    /// The CRC of the bytes so far.
    public private(set) var value: UInt32 = 0

    public init() {}

    public mutating func update(_ bytes: Span<UInt8>) {
        value = Checksums.crc32c(bytes, continuing: value)
    }

    public mutating func finalize() -> [UInt8] { ChecksumBytes.bigEndian(value) }

    /// The CRC-32C of `bytes` continuing `value`, on the table the machines without CRC instructions use.
    package static func tableValue(_ bytes: Span<UInt8>, continuing value: UInt32 = 0) -> UInt32 {
        Checksums.crc32cOnTable(bytes, continuing: value)
    }

    /// Whether this machine computes CRC-32C on its processor's instructions (else on a table, about a tenth as
    /// fast).
    public static var isHardwareAccelerated: Bool { Checksums.crc32cIsHardware }
}

/// CRC-32 as zlib, gzip, PNG and S3's `x-amz-checksum-crc32` compute it, from the zlib the package already links:
/// an integrity check against accidents, not against an attacker.
///
/// ```swift
/// let spooler = MultipartSpooler(directory: "/var/spool/uploads", digest: CRC32Digest.self)
/// ```
///
/// ``finalize()`` gives the four bytes most significant first (`"cbf43926"` in hex for the bytes "123456789").
public struct CRC32Digest: SpoolDigest {
    public static var algorithm: String { "crc32" }

    /// The CRC of the bytes so far.
    public private(set) var value: UInt32 = 0

    public init() {}

    public mutating func update(_ bytes: Span<UInt8>) {
        value = Checksums.crc32(bytes, continuing: value)
    }

    public mutating func finalize() -> [UInt8] { ChecksumBytes.bigEndian(value) }
}

enum ChecksumBytes {
    static func bigEndian(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
    }
}
