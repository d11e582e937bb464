import StreamingMultipart
import Testing

/// `LentBytes`, the parser's storage for chunks that lend theirs (a `ByteBuffer`'s): slices share it, and bytes
/// joined across chunks grow one copy in place.
@Suite struct LentBytesTests {
    /// Bytes appended one at a time grow one storage in doubling steps, as an array does: a header block that
    /// arrives a byte at a time costs linear time, not a copy of all it holds at every byte.
    @Test func appendingAByteAtATimeGrowsOneStorageInPlace() {
        var bytes = LentBytes()
        var storages: Set<ObjectIdentifier> = []
        for index in 0..<10_000 {
            let byte = [UInt8(truncatingIfNeeded: index)]
            bytes.append(contentsOf: byte.withUnsafeBytes { LentBytes(copying: $0) })
            storages.insert(ObjectIdentifier(bytes.owner!))
        }
        #expect(bytes.count == 10_000)
        #expect(bytes.withSpan { span in (0..<span.count).allSatisfy { span[$0] == UInt8(truncatingIfNeeded: $0) } })
        #expect(storages.count <= 16, "\(storages.count) storages for 10,000 appends")
    }

    /// A slice shares its storage, so appending to the slice copies and leaves the storage's bytes as they were.
    @Test func appendingToASharedSliceCopies() {
        let owner = [UInt8](repeating: 1, count: 8)
        var whole = owner.withUnsafeBytes { LentBytes(copying: $0) }
        let slice = whole[2..<6]
        var grown = slice
        grown.append(contentsOf: [UInt8](repeating: 2, count: 4).withUnsafeBytes { LentBytes(copying: $0) })
        #expect(grown.owner !== slice.owner)
        #expect(slice.withSpan { span in (0..<span.count).map { span[$0] } } == [1, 1, 1, 1])
        #expect(grown.withSpan { span in (0..<span.count).map { span[$0] } } == [1, 1, 1, 1, 2, 2, 2, 2])
        whole.removeFirst(8)
        #expect(whole.isEmpty && whole.first == nil)
    }
}
