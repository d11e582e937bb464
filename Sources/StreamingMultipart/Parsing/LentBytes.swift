/// A part's body bytes where they are: a region of a chunk that lends its storage (a `ByteBuffer`), kept alive by
/// the chunk's owner, or bytes the parser copied into storage of its own (the few it joins across two chunks). What
/// ``MultipartParts/PartBody`` hands out for a body of such chunks: the bytes, with no copy.
///
/// ```swift
/// for try await part in try buffers.multipartParts(contentType: contentType) {
///     for try await bytes in part.body {          // LentBytes: a region of the buffer they arrived in
///         bytes.withSpan { hasher.update($0) }     // read in place
///         let buffer = ByteBuffer(bytes)          // StreamingMultipartNIO: shares the buffer's storage
///     }
/// }
/// ```
///
/// A collection of bytes whose slices share its storage, indexed as an `ArraySlice` is: from the start of the
/// memory it was lent. A chunk in turn (``MultipartChunk``), so a `multipart/mixed` part's files parse from it.
///
/// The parser's storage too, for the chunks that lend theirs. The lender's promise, on which every read here
/// rests: while `owner` lives, the memory does not move or change. A `ByteBuffer`'s storage keeps it (a buffer
/// writes in place only while it holds the one reference to its storage, and the lent buffer holds another).
public struct LentBytes: Sendable {
    /// The lent memory: what keeps it alive, and its byte 0 (`Internal/LentMemory.swift`, where every read of it is).
    @usableFromInline var memory: LentMemory
    /// The first byte's index, counted from the start of the memory the bytes were lent in.
    public private(set) var startIndex: Int
    public private(set) var endIndex: Int

    /// No bytes.
    package init() {
        memory = LentMemory()
        startIndex = 0
        endIndex = 0
    }

    /// The bytes at `range` of `memory`.
    init(memory: LentMemory, range: Range<Int>) {
        self.memory = memory
        startIndex = range.lowerBound
        endIndex = range.upperBound
    }

    /// A copy of `bytes`, in storage of its own.
    @usableFromInline
    package init(copying bytes: ArraySlice<UInt8>) {
        let (memory, count) = LentMemory.copying(bytes)
        self.init(memory: memory, range: 0..<count)
    }

    /// What keeps the bytes alive: the lender, or the storage the parser copied them into (tests compare it).
    package var owner: AnyObject? { memory.owner }

    public var count: Int { endIndex - startIndex }
    public var isEmpty: Bool { startIndex == endIndex }
    public var first: UInt8? { isEmpty ? nil : self[startIndex] }

    /// A copy of the bytes in an array.
    @usableFromInline
    func copiedToArray() -> ArraySlice<UInt8> { memory.array(startIndex..<endIndex)[...] }

    /// Calls `body` with the object that lent the bytes, when it is exactly an `Owner` (the owner given to
    /// ``MultipartBytes/init(lending:owner:)``), borrowed (no reference counted), and the bytes' range in the region
    /// it lent; nil for bytes the parser copied, or another lender. A lending chunk type finds its own storage this
    /// way (as `ByteBuffer(_:)` of `StreamingMultipartNIO` does, to share the storage instead of copying).
    @inlinable
    public func withLender<Owner: AnyObject, Result>(
        _ type: Owner.Type, _ body: (borrowing Owner, Range<Int>) throws -> Result
    ) rethrows -> Result? {
        try memory.withOwner(type) { try body($0, startIndex..<endIndex) }
    }

    /// The bytes, for a reader that needs a pointer (a `write(2)`, a hash); valid inside `body` only.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try memory.lendRawBytes(startIndex..<endIndex, to: body)
    }
}

/// What a reader and the parser's engine read (the `ParserInput` conformance is declared beside that protocol; the
/// collection's, in `Parts/`).
extension LentBytes {
    public subscript(index: Int) -> UInt8 {
        @inline(__always) get {
            precondition(index >= startIndex && index < endIndex, "LentBytes index out of range")
            return memory.byte(at: index)
        }
    }

    /// The bytes in `range`, sharing this storage (no copy).
    public subscript(range: Range<Int>) -> LentBytes {
        @inline(__always) get {
            precondition(range.lowerBound >= startIndex && range.upperBound <= endIndex, "LentBytes range out of range")
            return LentBytes(memory: memory, range: range)
        }
    }

    /// Calls `body` with the bytes, indexed from 0, read in place.
    @inline(__always)
    public func withSpan<Result>(_ body: (Span<UInt8>) throws -> Result) rethrows -> Result {
        try memory.withSpan(startIndex..<endIndex, body)
    }

    @inline(__always)
    package mutating func removeFirst(_ count: Int) {
        precondition(count >= 0 && count <= self.count, "LentBytes.removeFirst past the end")
        startIndex += count
    }

    /// Appends `other`'s bytes: in place while these bytes hold the storage the parser copied them into alone, else
    /// into new storage.
    package mutating func append(contentsOf other: LentBytes) {
        guard !other.isEmpty else { return }
        guard !isEmpty else {
            self = other
            return
        }
        let range = memory.appending(startIndex..<endIndex, other.memory, other.startIndex..<other.endIndex)
        startIndex = range.lowerBound
        endIndex = range.upperBound
    }

    /// The bytes as one buffer pointer, for the generic algorithms that look for one (`Array(_:)`, a
    /// `ByteBuffer`'s `writeBytes`).
    public func withContiguousStorageIfAvailable<Result>(
        _ body: (UnsafeBufferPointer<UInt8>) throws -> Result
    ) rethrows -> Result? {
        try memory.lendBytes(startIndex..<endIndex, to: body)
    }
}
