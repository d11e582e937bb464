import Foundation
package import StreamingMultipart

/// A number that tasks share.
package final class SharedCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    package var value: Int { lock.withLock { count } }

    package init() {}

    package func add(_ amount: Int) { lock.withLock { count += amount } }
}

/// Memory lent to the parser as a `ByteBuffer` lends its storage, whose instances alive are counted: a test sees
/// which buffers the spooler and a store still hold.
///
/// ```swift
/// let stream = AsyncStream<LendingChunk> { ... LendingChunk(lender: CountedLender(bytes)) }
/// #expect(CountedLender.alive.value - before <= 3)
/// ```
package final class CountedLender: @unchecked Sendable {  // its memory never changes once made
    package static let alive = SharedCount()
    package let region: UnsafeRawBufferPointer

    package init(_ bytes: [UInt8]) {
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
        memory.copyBytes(from: bytes)
        region = UnsafeRawBufferPointer(memory)
        Self.alive.add(1)
    }

    deinit {
        region.deallocate()
        Self.alive.add(-1)
    }
}

/// A chunk that lends its lender's memory.
package struct LendingChunk: MultipartChunk, Sendable {
    package typealias MultipartSlice = LentBytes
    package let lender: CountedLender

    package init(lender: CountedLender) { self.lender = lender }

    package var multipartBytes: MultipartBytes { MultipartBytes(lending: lender.region, owner: lender) }
    package static func multipartSlice(_ bytes: consuming MultipartBytes) -> LentBytes { LentBytes(bytes) }
}

/// Whether one lender is still alive each time a test looks: held by something, or let go.
package final class LenderWatch: @unchecked Sendable {
    private let lock = NSLock()
    private weak var lender: CountedLender?
    private var seen: [Bool] = []
    /// Whether the lender was alive each time it was looked at.
    package var aliveWhenLooked: [Bool] { lock.withLock { seen } }

    package init() {}

    package func watch(_ lender: CountedLender) { lock.withLock { self.lender = lender } }
    package func look() { lock.withLock { seen.append(lender != nil) } }
}

/// A form of one file part, encoded and cut where a test of lent buffers wants it: the part's head in one buffer,
/// then the file's bytes 64 KiB a buffer (the first of them, index 1, the file's first chunk).
package struct OneFileForm {
    package let chunks: [[UInt8]]
    package let contentType: String

    package init(_ file: [UInt8], filename: String, contentType: String) throws {
        var body = MultipartBody()
        try body.append(.data(Data(file), name: "f", filename: filename, contentType: contentType))
        let bytes = try body.bytes()
        guard let fileStart = bytes.indices.first(where: { bytes[$0...].starts(with: file.prefix(64)) }) else {
            throw CocoaError(.coderInvalidValue)
        }
        chunks =
            [Array(bytes[..<fileStart])]
            + stride(from: fileStart, to: bytes.count, by: 65536).map {
                Array(bytes[$0..<min($0 + 65536, bytes.count)])
            }
        self.contentType = body.contentType
    }
}

extension AsyncStream where Element == LendingChunk {
    /// `chunks`, each lent by a lender of its own made when the reader asks for it; `watch` watches the lender of
    /// chunk `watched` and looks at it each time one of the last `looks` chunks is made.
    package static func lending(_ chunks: [[UInt8]], watching watched: Int, _ watch: LenderWatch, looks: Int)
        -> AsyncStream<LendingChunk>
    {
        let next = SharedCount()
        return AsyncStream {
            let index = next.value
            next.add(1)
            guard index < chunks.count else { return nil }
            let lender = CountedLender(chunks[index])
            if index == watched { watch.watch(lender) }
            if index >= chunks.count - looks { watch.look() }
            return LendingChunk(lender: lender)
        }
    }
}
