import NIOCore
import StreamingMultipart

/// A buffer lent to the parser: kept, unchanged, while the parser reads it or a part's body holds a region of it.
final class LentBuffer: Sendable {
    let buffer: ByteBuffer

    private init(_ buffer: ByteBuffer) { self.buffer = buffer }

    /// `buffer`'s readable bytes, lent: read in place for as long as the parser holds the returned bytes.
    ///
    /// The region stays valid while the `LentBuffer` lives: its buffer is a constant, so it never writes to its
    /// storage, and any other buffer that shares the storage copies it before writing (NIO's copy on write).
    static func lend(_ buffer: ByteBuffer) -> MultipartBytes {
        let owner = LentBuffer(buffer)
        return owner.buffer.withUnsafeReadableBytes { MultipartBytes(lending: $0, owner: owner) }
    }
}
