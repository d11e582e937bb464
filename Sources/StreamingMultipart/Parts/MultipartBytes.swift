/// A chunk's bytes as the parts sequence reads them: an array slice, or memory a chunk lends, read where it is.
///
/// A chunk type says which through ``MultipartChunk/multipartBytes``. Arrays hand over slices of themselves; a
/// `ByteBuffer` lends its storage (`StreamingMultipartNIO`), so that each part's body comes out as regions of the
/// buffers it arrived in (``LentBytes``), and no byte of a file part is copied on its way through the parser.
/// Another chunk type lends its storage this way:
///
/// ```swift
/// extension MyChunk: MultipartChunk {
///     public typealias MultipartSlice = LentBytes
///     public var multipartBytes: MultipartBytes {
///         MultipartBytes(lending: storage.region, owner: storage)  // storage: a final class that never writes
///     }
///     public static func multipartSlice(_ bytes: consuming MultipartBytes) -> LentBytes { LentBytes(bytes) }
/// }
/// ```
///
/// Bytes a body's parser had to join across two chunks (a delimiter's start, a header block) come out copied, in
/// storage of the parser's own: ``withLender(_:_:)`` finds no lender for them.
public struct MultipartBytes: Sendable {
    @usableFromInline
    enum Storage: Sendable {
        case array(ArraySlice<UInt8>)
        case lent(LentBytes)
    }

    @usableFromInline let storage: Storage

    /// Bytes in an array: read in place, handed out as slices of `bytes`.
    public init(_ bytes: ArraySlice<UInt8>) { storage = .array(bytes) }

    /// Bytes read where they are: `region`, which `owner` keeps alive and unchanged for as long as it lives.
    ///
    /// The parts sequence keeps `owner` while it reads the region or hands out bytes of it, and reads the memory
    /// without a copy: that `owner` keeps it unchanged is the caller's promise (a `ByteBuffer`'s storage does, since
    /// a buffer writes in place only while it holds the one reference to its storage).
    public init(lending region: UnsafeRawBufferPointer, owner: some AnyObject & Sendable) {
        storage = .lent(LentBytes(memory: LentMemory(owner: owner, region: region), range: 0..<region.count))
    }

    init(_ bytes: LentBytes) { storage = .lent(bytes) }

    /// How many bytes.
    public var count: Int {
        switch storage {
        case .array(let bytes): bytes.count
        case .lent(let bytes): bytes.count
        }
    }

    /// Calls `body` with the bytes.
    public func withSpan<Result>(_ body: (Span<UInt8>) throws -> Result) rethrows -> Result {
        switch storage {
        case .array(let bytes): try body(bytes.span)
        case .lent(let bytes): try bytes.withSpan(body)
        }
    }

    /// The first `maxLength` bytes (all of them when there are fewer), sharing this storage.
    func prefix(_ maxLength: Int) -> MultipartBytes {
        switch storage {
        case .array(let bytes): MultipartBytes(bytes.prefix(maxLength))
        case .lent(let bytes):
            MultipartBytes(bytes[bytes.startIndex..<(bytes.startIndex + min(maxLength, bytes.count))])
        }
    }

    /// The bytes as an array slice: the slice itself for bytes in an array, a copy for lent ones.
    @inlinable
    public var arraySlice: ArraySlice<UInt8> {
        switch storage {
        case .array(let bytes): bytes
        case .lent(let bytes): bytes.copiedToArray()
        }
    }

    /// Calls `body` with the object that lent these bytes, when it is an `Owner` (that class exactly, not a
    /// subclass), and where they sit in the region it lent (offsets from its first byte); returns nil, without
    /// calling it, for bytes in an array and for bytes the parser copied. The owner is lent to `body` too: no
    /// reference to it is counted, which matters at one call per field of a form.
    ///
    /// ```swift
    /// bytes.withLender(BufferOwner.self) { owner, range in owner.view[range] }  // nil: copy the bytes instead
    /// ```
    @inlinable
    public func withLender<Owner: AnyObject, Result>(
        _ type: Owner.Type, _ body: (borrowing Owner, Range<Int>) throws -> Result
    ) rethrows -> Result? {
        guard case .lent(let bytes) = storage else { return nil }
        return try bytes.withLender(type, body)
    }
}
