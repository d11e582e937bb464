/// The storage the parser's engine (``MultipartParser/Engine``) reads and hands out body bytes of: array slices,
/// for ``MultipartParser``, or ``LentBytes``, memory another type owns (a `ByteBuffer`'s), for the parts of a body
/// whose chunks lend their storage. The engine is generic over it and specialized for both inside this module.
///
/// Indexes are the storage's own (an `ArraySlice`'s), and a slice keeps them.
package protocol ParserInput: Sendable {
    /// The events of an engine over this storage: ``MultipartParser/Event`` for array slices, so that
    /// ``MultipartParser`` hands out its engine's events as they are, with no copy of each into another type.
    associatedtype Event: ParserEvent where Event.Bytes == Self

    /// No bytes.
    init()
    var startIndex: Int { get }
    var endIndex: Int { get }
    var count: Int { get }
    var isEmpty: Bool { get }
    var first: UInt8? { get }
    subscript(index: Int) -> UInt8 { get }
    /// The bytes in `range`, sharing this storage (no copy).
    subscript(range: Range<Int>) -> Self { get }
    /// Calls `body` with the bytes, indexed from 0.
    func withSpan<Result>(_ body: (Span<UInt8>) throws -> Result) rethrows -> Result
    /// Drops the first `count` bytes, in place.
    mutating func removeFirst(_ count: Int)
    /// Appends a copy of `other`'s bytes: in place when this storage is the only reference to its bytes and
    /// they end its storage, so that appending a byte at a time costs amortized constant time.
    mutating func append(contentsOf other: Self)
}

extension ParserInput {
    /// The bytes from `start` to the end, sharing this storage.
    subscript(from start: Int) -> Self { self[start..<endIndex] }

    /// Whether the bytes begin with `prefix`.
    func hasPrefix(_ prefix: ArraySlice<UInt8>) -> Bool {
        guard prefix.count <= count else { return false }
        return withSpan { bytes in
            var index = 0
            for byte in prefix {
                guard bytes[index] == byte else { return false }
                index += 1
            }
            return true
        }
    }

    /// A copy of the bytes in `range`, for an error message.
    func copy(_ range: Range<Int>) -> [UInt8] {
        withSpan { bytes in
            (range.lowerBound - startIndex..<range.upperBound - startIndex).map { bytes[$0] }
        }
    }
}

/// What an engine emits, in body order (see ``MultipartParser/Event``), with body bytes in its storage.
package protocol ParserEvent {
    associatedtype Bytes
    static func partHeaders(_ head: MultipartParser.PartHead) -> Self
    static func bodyBytes(_ bytes: Bytes) -> Self
    static var partEnd: Self { get }
    static var end: Self { get }
}

extension MultipartParser.Event: ParserEvent {}

extension ArraySlice<UInt8>: ParserInput {
    package typealias Event = MultipartParser.Event

    @inline(__always)
    package func withSpan<Result>(_ body: (Span<UInt8>) throws -> Result) rethrows -> Result { try body(span) }
}

extension LentBytes: ParserInput {
    /// ``MultipartParser/Event`` with lent body bytes.
    package enum Event: ParserEvent {
        case partHeaders(MultipartParser.PartHead)
        case bodyBytes(LentBytes)
        case partEnd
        case end
    }
}
