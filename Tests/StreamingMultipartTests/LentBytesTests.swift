import MultipartTestSupport
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
            bytes.append(contentsOf: LentBytes(copying: byte[...]))
            storages.insert(ObjectIdentifier(bytes.owner!))
        }
        #expect(bytes.count == 10_000)
        #expect(bytes.withSpan { span in (0..<span.count).allSatisfy { span[$0] == UInt8(truncatingIfNeeded: $0) } })
        #expect(storages.count <= 16, "\(storages.count) storages for 10,000 appends")
    }

    /// A slice shares its storage, so appending to the slice copies and leaves the storage's bytes as they were.
    @Test func appendingToASharedSliceCopies() {
        let owner = [UInt8](repeating: 1, count: 8)
        var whole = LentBytes(copying: owner[...])
        let slice = whole[2..<6]
        var grown = slice
        grown.append(contentsOf: LentBytes(copying: [UInt8](repeating: 2, count: 4)[...]))
        #expect(grown.owner !== slice.owner)
        #expect(slice.withSpan { span in (0..<span.count).map { span[$0] } } == [1, 1, 1, 1])
        #expect(grown.withSpan { span in (0..<span.count).map { span[$0] } } == [1, 1, 1, 1, 2, 2, 2, 2])
        whole.removeFirst(8)
        #expect(whole.isEmpty && whole.first == nil)
    }

    /// Lent bytes, as a part's body hands them out, are a collection over the memory they were lent: a slice keeps
    /// its indices and reads the lender's bytes in place, and `withLender` finds the lender and the range in what it
    /// lent. Bytes the parser copied have no lender.
    @Test func lentBytesAreACollectionOverTheLentMemory() throws {
        let lender = Lender(Array(0..<100))
        let lent = LentBytes(MultipartBytes(lending: lender.region, owner: lender))
        let slice = lent[10..<20]
        #expect(slice.startIndex == 10 && slice.endIndex == 20 && slice.count == 10)
        #expect(Array(slice) == Array(10..<20))
        #expect(slice.first == 10 && slice[19] == 19)
        #expect(slice.withLender(Lender.self) { _, range in range } == 10..<20)
        let address = try #require(slice.withContiguousStorageIfAvailable { $0.baseAddress })
        #expect(UnsafeRawPointer(address) == lender.region.baseAddress! + 10, "read in place")
        #expect(slice.multipartBytes.withLender(Lender.self) { _, range in range } == 10..<20, "lent on as a chunk")
        let copied = LentBytes(MultipartBytes(Array(slice)[...]))
        #expect(Array(copied) == Array(10..<20))
        #expect(copied.withLender(Lender.self) { _, _ in true } == nil, "copied bytes have no lender")
        #expect(String(describing: slice) == "LentBytes(10 bytes)")
    }
}

/// Memory that a test lends, as a `ByteBuffer` lends its storage.
final class Lender: @unchecked Sendable {  // its memory never changes once made
    let region: UnsafeRawBufferPointer

    init(_ bytes: [UInt8]) {
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
        memory.copyBytes(from: bytes)
        region = UnsafeRawBufferPointer(memory)
    }

    deinit { region.deallocate() }
}

/// The engine over lent storage on the floods that make a parser rescan, in small buffers (each ends in a held tail):
/// thread CPU time grows linearly, and the engine holds no more than a buffer and a header block.
@Suite struct LentEngineLinearTimeTests {
    static let boundary = "----WebKitFormBoundary7MA4YWxkTrZu0gW"

    /// A file part of `megabytes` of `unit` repeated, in a body.
    static func body(_ unit: String, megabytes: Int) -> [UInt8] {
        let head = Array(
            ("--\(boundary)\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f.bin\"\r\n\r\n").utf8)
        let unitBytes = Array(unit.utf8)
        var bytes = head
        bytes.reserveCapacity((megabytes << 20) + 200)
        while bytes.count < head.count + (megabytes << 20) { bytes += unitBytes }
        return bytes + Array("\r\n--\(boundary)--\r\n".utf8)
    }

    /// Thread CPU time of parsing `body` in lent buffers of 777 bytes.
    static func parse(_ body: [UInt8]) throws -> Duration {
        var engine = MultipartParser.Engine<LentBytes>(
            boundary: try MultipartBoundary(contentTypeBoundary: boundary), limits: .default, mode: .lenient)
        let chunks = stride(from: 0, to: body.count, by: 777).map {
            LentBytes(copying: body[$0..<min($0 + 777, body.count)])
        }
        var held = 0
        let (_, time) = try measureThreadCPUTime {
            for chunk in chunks {
                try engine.append(chunk)
                while try engine.next() != nil {}
                held = max(held, engine.bufferedByteCount)
            }
            try engine.finish()
        }
        #expect(held <= 777 + 16 << 10, "held \(held) bytes")
        return time
    }

    @Test(arguments: ["\r\n--\(boundary.dropLast())x", "\r\n", "\r\r\r\n", "--"])
    func floodsInLentBuffersParseInLinearTime(unit: String) async throws {
        let growth = try await onThreadOfItsOwn {
            try linearGrowthRatio(
                limit: 8, medium: { try Self.parse(Self.body(unit, megabytes: 16)) },
                large: { try Self.parse(Self.body(unit, megabytes: 64)) })
        }
        print("LentEngineLinearTimeTests: \(unit.debugDescription): \(growth.medium), \(growth.large)")
        #expect(growth.ratio < 8, "64 MB took \(growth.ratio)× the CPU time of 16 MB")
    }
}
