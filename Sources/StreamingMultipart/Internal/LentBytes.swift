/// Bytes read where they are: a region of memory that `owner` keeps alive and unchanged, or bytes the parser copied
/// into storage of its own (``HeldBytes``). The parser's input when a body's chunks lend their storage (a
/// `ByteBuffer`'s), so that a part's body comes out as a region of the chunk it arrived in, not as a copy.
///
/// Indexes count from the owner's first byte, as an `ArraySlice`'s count from its array's, so a slice keeps them.
///
/// ```swift
/// let bytes = LentBytes(owner: box, bytes: region)   // the lender vouches for `region` while `box` lives
/// let body = bytes[10..<20]                          // shares `box`, copies nothing
/// ```
///
/// The lender's promise, on which every read here rests: while `owner` lives, the memory does not move or change.
/// A `ByteBuffer`'s storage keeps it (a buffer writes in place only while it holds the one reference to its
/// storage, and `owner` holds another).
@usableFromInline
package struct LentBytes: @unchecked Sendable {
    /// What keeps the memory alive: the lender's object, or the ``HeldBytes`` the bytes were copied into. Nil for
    /// no bytes.
    @usableFromInline package private(set) var owner: AnyObject?
    /// The owner's byte 0.
    private var base: UnsafeRawPointer?
    @usableFromInline package private(set) var startIndex: Int
    @usableFromInline package private(set) var endIndex: Int

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

    package var count: Int { endIndex - startIndex }
    package var isEmpty: Bool { startIndex == endIndex }
    package var first: UInt8? { isEmpty ? nil : self[startIndex] }

    /// A copy of `bytes`, in storage of its own.
    package init(copying bytes: ArraySlice<UInt8>) {
        self = bytes.withUnsafeBytes { LentBytes(copying: $0) }
    }

    /// A copy of the bytes in an array.
    @usableFromInline
    func copiedToArray() -> ArraySlice<UInt8> { withUnsafeBytes { [UInt8]($0)[...] } }

    /// Calls `body` with the owner, when it is exactly an `Owner`, borrowed (no reference counted), and the bytes'
    /// range in what it lent; nil for another owner, or none.
    @inlinable
    func withOwner<Owner: AnyObject, Result>(
        _ type: Owner.Type, _ body: (borrowing Owner, Range<Int>) throws -> Result
    ) rethrows -> Result? {
        // The exact class, compared by its metadata: cheaper than a cast, which walks the class hierarchy.
        guard let owner, ObjectIdentifier(Swift.type(of: owner)) == ObjectIdentifier(Owner.self) else { return nil }
        return try body(unsafeDowncast(owner, to: Owner.self), startIndex..<endIndex)
    }

    /// The bytes, for a reader that needs a pointer (a `write(2)`, a hash); valid inside `body` only.
    package func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: base.map { $0 + startIndex }, count: count))
    }
}

/// What the parser's engine reads (its `ParserInput` conformance is declared beside that protocol, in `Parsing/`).
extension LentBytes {
    package subscript(index: Int) -> UInt8 {
        @inline(__always) get {
            precondition(index >= startIndex && index < endIndex, "LentBytes index out of range")
            return base.unsafelyUnwrapped.load(fromByteOffset: index, as: UInt8.self)
        }
    }

    package subscript(range: Range<Int>) -> LentBytes {
        @inline(__always) get {
            precondition(range.lowerBound >= startIndex && range.upperBound <= endIndex, "LentBytes range out of range")
            return LentBytes(owner: owner, base: base, range: range)
        }
    }

    @inline(__always)
    package func withSpan<Result>(_ body: (Span<UInt8>) throws -> Result) rethrows -> Result {
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
        let held = HeldBytes(capacity: max(2 * (count + other.count), 256))
        withUnsafeBytes { held.append($0) }
        other.withUnsafeBytes { held.append($0) }
        self = LentBytes(owner: held, base: UnsafeRawPointer(held.base), range: 0..<held.count)
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
