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
public struct LentBytes: @unchecked Sendable {
    /// What keeps the memory alive: the lender's object, or the ``HeldBytes`` the bytes were copied into. Nil for
    /// no bytes.
    @usableFromInline package private(set) var owner: AnyObject?
    /// The owner's byte 0.
    private var base: UnsafeRawPointer?
    /// The first byte's index, counted from the start of the memory the bytes were lent in.
    public private(set) var startIndex: Int
    public private(set) var endIndex: Int

    package init() {
        owner = nil
        base = nil
        startIndex = 0
        endIndex = 0
    }

    /// The bytes of `region`, which `owner` keeps alive and unchanged while it lives; indexed from 0.
    package init(owner: AnyObject, bytes region: UnsafeRawBufferPointer) {
        self.owner = owner
        base = region.baseAddress
        startIndex = 0
        endIndex = region.count
    }

    /// A copy of `bytes`, in storage of its own.
    package init(copying bytes: UnsafeRawBufferPointer) {
        self.init()
        guard !bytes.isEmpty else { return }
        let held = HeldBytes(capacity: bytes.count)
        held.append(bytes)
        self = LentBytes(owner: held, base: UnsafeRawPointer(held.base), range: 0..<held.count)
    }

    private init(owner: AnyObject?, base: UnsafeRawPointer?, range: Range<Int>) {
        self.owner = owner
        self.base = base
        startIndex = range.lowerBound
        endIndex = range.upperBound
    }

    public var count: Int { endIndex - startIndex }
    public var isEmpty: Bool { startIndex == endIndex }
    public var first: UInt8? { isEmpty ? nil : self[startIndex] }

    /// A copy of `bytes`, in storage of its own.
    @usableFromInline
    package init(copying bytes: ArraySlice<UInt8>) {
        self = bytes.withUnsafeBytes { LentBytes(copying: $0) }
    }

    /// A copy of the bytes in an array.
    @usableFromInline
    func copiedToArray() -> ArraySlice<UInt8> { withUnsafeBytes { [UInt8]($0)[...] } }

    /// Calls `body` with the object that lent the bytes, when it is exactly an `Owner` (the owner given to
    /// ``MultipartBytes/init(lending:owner:)``), borrowed (no reference counted), and the bytes' range in the region
    /// it lent; nil for bytes the parser copied, or another lender. A lending chunk type finds its own storage this
    /// way (as `ByteBuffer(_:)` of `StreamingMultipartNIO` does, to share the storage instead of copying).
    @inlinable
    public func withLender<Owner: AnyObject, Result>(
        _ type: Owner.Type, _ body: (borrowing Owner, Range<Int>) throws -> Result
    ) rethrows -> Result? {
        // The exact class, compared by its metadata: cheaper than a cast, which walks the class hierarchy.
        guard let owner, ObjectIdentifier(Swift.type(of: owner)) == ObjectIdentifier(Owner.self) else { return nil }
        return try body(unsafeDowncast(owner, to: Owner.self), startIndex..<endIndex)
    }

    /// The bytes, for a reader that needs a pointer (a `write(2)`, a hash); valid inside `body` only.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: base.map { $0 + startIndex }, count: count))
    }
}

/// What a reader and the parser's engine read (the `ParserInput` conformance is declared beside that protocol, in
/// `Parsing/`; the collection's, in `Parts/`).
extension LentBytes {
    public subscript(index: Int) -> UInt8 {
        @inline(__always) get {
            precondition(index >= startIndex && index < endIndex, "LentBytes index out of range")
            return base.unsafelyUnwrapped.load(fromByteOffset: index, as: UInt8.self)
        }
    }

    /// The bytes in `range`, sharing this storage (no copy).
    public subscript(range: Range<Int>) -> LentBytes {
        @inline(__always) get {
            precondition(range.lowerBound >= startIndex && range.upperBound <= endIndex, "LentBytes range out of range")
            return LentBytes(owner: owner, base: base, range: range)
        }
    }

    /// Calls `body` with the bytes, indexed from 0, read in place.
    @inline(__always)
    public func withSpan<Result>(_ body: (Span<UInt8>) throws -> Result) rethrows -> Result {
        try withUnsafeBytes { try body($0.assumingMemoryBound(to: UInt8.self).span) }
    }

    @inline(__always)
    package mutating func removeFirst(_ count: Int) {
        precondition(count >= 0 && count <= self.count, "LentBytes.removeFirst past the end")
        startIndex += count
    }

    package mutating func append(contentsOf other: LentBytes) {
        guard !other.isEmpty else { return }
        guard !isEmpty else {
            self = other
            return
        }
        // Uniqueness first: the cast below holds a reference of its own.
        if isUniquelyHeld(), let held = owner as? HeldBytes, held.count == endIndex,
            held.capacity - endIndex >= other.count
        {
            other.withUnsafeBytes { held.append($0) }
            endIndex += other.count
            return
        }
        let held = HeldBytes(capacity: Swift.max(2 * (count + other.count), 256))
        withUnsafeBytes { held.append($0) }
        other.withUnsafeBytes { held.append($0) }
        self = LentBytes(owner: held, base: UnsafeRawPointer(held.base), range: 0..<held.count)
    }

    /// The bytes as one buffer pointer, for the generic algorithms that look for one (`Array(_:)`, a
    /// `ByteBuffer`'s `writeBytes`).
    public func withContiguousStorageIfAvailable<Result>(
        _ body: (UnsafeBufferPointer<UInt8>) throws -> Result
    ) rethrows -> Result? {
        try withUnsafeBytes { try body($0.assumingMemoryBound(to: UInt8.self)) }
    }

    /// Whether this value holds the only reference to its owner (then its storage may grow in place).
    private mutating func isUniquelyHeld() -> Bool { isKnownUniquelyReferenced(&owner) }
}

/// Storage the parser copied lent bytes into: the tail of one chunk joined to the start of the next. Grows in place
/// only while one ``LentBytes`` holds it (see ``LentBytes/append(contentsOf:)``); its bytes never change once
/// another value shares it.
final class HeldBytes: @unchecked Sendable {
    let base: UnsafeMutableRawPointer
    let capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        base = .allocate(byteCount: capacity, alignment: 16)
        self.capacity = capacity
    }

    deinit { base.deallocate() }

    func append(_ bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count <= capacity - count, "HeldBytes overflow")
        if let source = bytes.baseAddress { (base + count).copyMemory(from: source, byteCount: bytes.count) }
        count += bytes.count
    }
}
