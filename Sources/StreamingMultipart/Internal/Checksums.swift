import CCRC32C
import CZlib

/// CRC-32C and CRC-32 over spans: the one place the spool digests reach their C functions. Callers pass spans; the
/// pointers stay in here.
enum Checksums {
    /// The CRC-32C of `bytes` continuing `crc` (0 for the first bytes), on the processor's CRC instructions where it
    /// has them.
    static func crc32c(_ bytes: Span<UInt8>, continuing crc: UInt32) -> UInt32 {
        bytes.withUnsafeBufferPointer { sm_crc32c_update(crc, $0.baseAddress, $0.count) }
    }

    /// ``crc32c(_:continuing:)`` on the table alone, whatever the processor.
    static func crc32cOnTable(_ bytes: Span<UInt8>, continuing crc: UInt32) -> UInt32 {
        bytes.withUnsafeBufferPointer { sm_crc32c_update_table(crc, $0.baseAddress, $0.count) }
    }

    /// Whether ``crc32c(_:continuing:)`` runs on the processor's CRC instructions here.
    static var crc32cIsHardware: Bool { sm_crc32c_is_hardware() != 0 }

    /// zlib's CRC-32 of `bytes` continuing `crc` (0 for the first bytes).
    static func crc32(_ bytes: Span<UInt8>, continuing crc: UInt32) -> UInt32 {
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return crc }
            return UInt32(truncatingIfNeeded: crc32_z(UInt(crc), base, buffer.count))
        }
    }
}
