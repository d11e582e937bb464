/// Lent bytes are a collection of bytes whose slices share their storage, as an `ArraySlice`'s do.
extension LentBytes: RandomAccessCollection {
    public typealias Index = Int
    public typealias Indices = Range<Int>
    public typealias SubSequence = LentBytes
}

/// Lent bytes are a chunk in turn, lent as they are: the files of a `multipart/mixed` part parse from its body with
/// no copy.
extension LentBytes: MultipartChunk {
    public typealias MultipartSlice = LentBytes

    public var multipartBytes: MultipartBytes { MultipartBytes(self) }

    public static func multipartSlice(_ bytes: consuming MultipartBytes) -> LentBytes { LentBytes(bytes) }
}

extension LentBytes {
    /// `bytes` as lent bytes: themselves when lent, else a copy (what a lending chunk type's
    /// ``MultipartChunk/multipartSlice(_:)`` returns).
    ///
    /// ```swift
    /// public static func multipartSlice(_ bytes: consuming MultipartBytes) -> LentBytes { LentBytes(bytes) }
    /// ```
    @inlinable
    public init(_ bytes: consuming MultipartBytes) {
        switch bytes.storage {
        case .array(let bytes): self.init(copying: bytes)
        case .lent(let bytes): self = bytes
        }
    }
}

/// Lent bytes print as their count, not as the region's address.
extension LentBytes: CustomStringConvertible {
    public var description: String { "LentBytes(\(count) bytes)" }
}
