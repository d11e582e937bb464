import Foundation
package import StreamingMultipart
import Testing

/// The rule every body sequence follows (`chunks`, and the NIO module's `byteBuffers`): a task cancelled while
/// it holds an iterator has its file closed by the next `next()`, which throws `CancellationError`.
package func expectCancellingTheTaskClosesTheFile<Chunks: AsyncSequence & Sendable>(
    _ sequence: @escaping @Sendable (MultipartBody) -> Chunks
) async throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let file = try folder.file("big.bin", contents: [UInt8](repeating: 3, count: 1 << 20))
    var body = MultipartBody()
    try body.append(.file(at: file, name: "big"))
    let path = file.path
    let firstChunkSeen = AsyncStream<Void>.makeStream()
    let task = Task { [body] in
        var iterator = sequence(body).makeAsyncIterator()
        _ = try await iterator.next()
        firstChunkSeen.continuation.yield()
        // Wait for cancellation, holding the iterator (and its open file).
        while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
        #expect(processHasOpen(path))
        do {
            _ = try await iterator.next()
            Issue.record("next() after cancellation returned instead of throwing")
        } catch {
            #expect(error is CancellationError)
        }
        #expect(!processHasOpen(path))
    }
    for await _ in firstChunkSeen.stream { break }
    task.cancel()
    try await task.value
    #expect(!processHasOpen(path))
}

/// The chunks of `bytes`, `size` bytes each, as an async sequence.
package func chunkStream(_ bytes: [UInt8], size: Int) -> AsyncStream<[UInt8]> {
    AsyncStream { continuation in
        for start in stride(from: 0, to: bytes.count, by: size) {
            continuation.yield(Array(bytes[start..<min(start + size, bytes.count)]))
        }
        continuation.finish()
    }
}
