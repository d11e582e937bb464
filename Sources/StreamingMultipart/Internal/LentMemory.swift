/// The memory a `LentBytes` reads: the object that keeps it alive and unchanged (the lender's, or the ``HeldBytes``
/// the parser copied bytes into) and its byte 0. Every read of lent memory is here, in `Internal/`; the public type
/// and its safe members are in `Parsing/LentBytes.swift`, and its indexes are counted from byte 0.
@usableFromInline
struct LentMemory: @unchecked Sendable {
    /// What keeps the memory alive; nil for no bytes.
    @usableFromInline var owner: AnyObject?
    /// The owner's byte 0.
    @usableFromInline let base: UnsafeRawPointer?

    /// No memory.
    init() {
        owner = nil
        base = nil
    }

    /// The memory of `region`, which `owner` keeps alive and unchanged while it lives.
    init(owner: AnyObject, region: UnsafeRawBufferPointer) {
        self.owner = owner
        base = region.baseAddress
    }

    private init(held: HeldBytes) {
        owner = held
        base = UnsafeRawPointer(held.base)
    }

    /// A copy of `bytes` in memory of its own, and its count.
    static func copying(_ bytes: ArraySlice<UInt8>) -> (LentMemory, count: Int) {
        guard !bytes.isEmpty else { return (LentMemory(), 0) }
        let held = HeldBytes(capacity: bytes.count)
        bytes.withUnsafeBytes { held.append($0) }
        return (LentMemory(held: held), held.count)
    }

    /// The byte at `index`; the caller checked it is in range.
    @inline(__always)
    func byte(at index: Int) -> UInt8 {
        base.unsafelyUnwrapped.load(fromByteOffset: index, as: UInt8.self)
    }

    /// Calls `body` with the bytes of `range`, read in place.
    @inline(__always)
    func withSpan<Result>(_ range: Range<Int>, _ body: (Span<UInt8>) throws -> Result) rethrows -> Result {
        try lendRawBytes(range) { try body($0.assumingMemoryBound(to: UInt8.self).span) }
    }

    /// Lends `body` the bytes of `range` as a pointer, valid inside `body` only.
    func lendRawBytes<Result>(_ range: Range<Int>, to body: (UnsafeRawBufferPointer) throws -> Result)
        rethrows -> Result
    {
        try body(UnsafeRawBufferPointer(start: base.map { $0 + range.lowerBound }, count: range.count))
    }

    /// Lends `body` the bytes of `range` as a buffer of bytes, valid inside `body` only.
    func lendBytes<Result>(
        _ range: Range<Int>, to body: (UnsafeBufferPointer<UInt8>) throws -> Result
    ) rethrows -> Result {
        try lendRawBytes(range) { try body($0.assumingMemoryBound(to: UInt8.self)) }
    }

    /// A copy of the bytes of `range`.
    func array(_ range: Range<Int>) -> [UInt8] { lendRawBytes(range) { [UInt8]($0) } }

    /// Calls `body` with the owner, borrowed (no reference counted), when it is exactly an `Owner`; nil otherwise.
    @inlinable
    func withOwner<Owner: AnyObject, Result>(_ type: Owner.Type, _ body: (borrowing Owner) throws -> Result)
        rethrows -> Result?
    {
        // The exact class, compared by its metadata: cheaper than a cast, which walks the class hierarchy.
        guard let owner, ObjectIdentifier(Swift.type(of: owner)) == ObjectIdentifier(Owner.self) else { return nil }
        return try body(unsafeDowncast(owner, to: Owner.self))
    }

    /// The bytes of `range` followed by `other`'s bytes of `otherRange`, and the new range: grown in place when this
    /// value holds its ``HeldBytes`` alone, `range` ends at its end and it has room; else copied into new memory of
    /// twice their size (at least 256 bytes).
    mutating func appending(_ range: Range<Int>, _ other: LentMemory, _ otherRange: Range<Int>) -> Range<Int> {
        // Uniqueness first: the cast below holds a reference of its own.
        if isKnownUniquelyReferenced(&owner), let held = owner as? HeldBytes, held.count == range.upperBound,
            held.capacity - range.upperBound >= otherRange.count
        {
            other.lendRawBytes(otherRange) { held.append($0) }
            return range.lowerBound..<range.upperBound + otherRange.count
        }
        let held = HeldBytes(capacity: Swift.max(2 * (range.count + otherRange.count), 256))
        lendRawBytes(range) { held.append($0) }
        other.lendRawBytes(otherRange) { held.append($0) }
        self = LentMemory(held: held)
        return 0..<held.count
    }
}

/// Storage the parser copied lent bytes into: the tail of one chunk joined to the start of the next. Grows in place
/// only while one `LentBytes` holds it (see ``LentMemory/appending(_:_:_:)``); its bytes never change once another
/// value shares it.
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
