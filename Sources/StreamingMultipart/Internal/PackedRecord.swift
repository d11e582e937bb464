/// An immutable record in one allocation: a header of plain values, a table of integers and a run of bytes, which
/// code outside `Internal/` fills and reads through spans. ``ReceivedHead`` keeps a part's header block in one, so
/// that a parsed part costs one allocation.
///
/// ```swift
/// let record = PackedRecord.make(tableCount: 1, byteCapacity: 5) { table, bytes in
///     for byte in "hello".utf8 { bytes.append(byte) }
///     table[0] = bytes.count
///     return Info()
/// }
/// record.withContents { table, bytes in table[0] == bytes.count }  // true
/// ```
///
/// Memory layout: the header (with the sizes of the two areas), then the integers, then the bytes. Immutable once
/// made, so it may be shared across tasks when `Header` is `Sendable`.
final class PackedRecord<Header>: ManagedBuffer<PackedRecordHeader<Header>, Int> {
    /// A record with `tableCount` integers (initially zero) and up to `byteCapacity` bytes: `initialize` sets the
    /// table, appends the bytes and returns the header.
    static func make(
        tableCount: Int, byteCapacity: Int,
        initialize: (_ table: inout MutableSpan<Int>, _ bytes: inout OutputSpan<UInt8>) throws -> Header
    ) rethrows -> PackedRecord {
        let stride = MemoryLayout<Int>.stride
        let created = try create(minimumCapacity: tableCount + (byteCapacity + stride - 1) / stride) { buffer in
            try buffer.withUnsafeMutablePointerToElements { elements in
                elements.initialize(repeating: 0, count: tableCount)
                var tableOutput = OutputSpan(
                    buffer: UnsafeMutableBufferPointer(start: elements, count: tableCount), initializedCount: tableCount
                )
                var table = tableOutput.mutableSpan
                let byteArea = UnsafeMutableBufferPointer(
                    start: UnsafeMutableRawPointer(elements + tableCount).assumingMemoryBound(to: UInt8.self),
                    count: byteCapacity)
                var bytes = OutputSpan(buffer: byteArea, initializedCount: 0)
                let header = try initialize(&table, &bytes)
                let byteCount = bytes.finalize(for: byteArea)
                return PackedRecordHeader(header: header, tableCount: tableCount, byteCount: byteCount)
            }
        }
        return unsafeDowncast(created, to: PackedRecord.self)
    }

    /// The caller's header, read without `ManagedBuffer.header`'s run-time exclusivity check (the record is
    /// immutable).
    var value: Header { withUnsafeMutablePointerToHeader { $0.pointee.header } }

    /// Calls `body` with the table and the bytes.
    func withContents<Result>(_ body: (_ table: Span<Int>, _ bytes: Span<UInt8>) throws -> Result) rethrows -> Result {
        let counts = withUnsafeMutablePointerToHeader { ($0.pointee.tableCount, $0.pointee.byteCount) }
        return try withUnsafeMutablePointerToElements { elements in
            let table = UnsafeBufferPointer(start: elements, count: counts.0)
            let bytes = UnsafeBufferPointer(
                start: UnsafeRawPointer(elements + counts.0).assumingMemoryBound(to: UInt8.self), count: counts.1)
            return try body(table.span, bytes.span)
        }
    }
}

/// A ``PackedRecord``'s header: the caller's, and the sizes of the record's two areas.
struct PackedRecordHeader<Header> {
    var header: Header
    var tableCount: Int
    var byteCount: Int
}
