import Foundation
import StreamingMultipart
import Testing

@Suite struct AsyncChunksTests {
    @Test func chunksConcatenateToTheBody() async throws {
        var body = MultipartBody()
        try body.append(.text("hello", name: "a"))
        try body.append(.file(at: Repository.input("blob.bin"), name: "blob"))
        let expected = try body.bytes()
        for size in [1, 100, 64 * 1024] {
            var collected: [UInt8] = []
            var count = 0
            for try await chunk in body.chunks(size: size) {
                #expect(chunk.count <= size && !chunk.isEmpty)
                collected += chunk
                count += 1
            }
            #expect(collected == expected)
            #expect(count == (expected.count + size - 1) / size)
        }
        #expect(body.chunks().contentLength == body.contentLength)
    }

    @Test(.enabled(if: canListOpenFiles, "lists open files through /proc/self/fd (Linux only)"))
    func cancellingTheTaskClosesTheFile() async throws {
        try await Self.cancellingTheTaskClosesTheFile { $0.chunks(size: 1024) }
    }

    /// The rule every body sequence follows (`chunks`, and the NIO module's `byteBuffers`): a task cancelled while
    /// it holds an iterator has its file closed by the next `next()`, which throws `CancellationError`.
    static func cancellingTheTaskClosesTheFile<Chunks: AsyncSequence & Sendable>(
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

    @Test func throttleSleepsBetweenPackets() async throws {
        var body = MultipartBody()
        try body.append(.data(Data(repeating: 1, count: 2500), name: "d", filename: "d.bin"))
        let throttle = MultipartBody.Throttle(packetSize: 1000, delay: .milliseconds(20))
        let clock = ContinuousClock()
        var sizes: [Int] = []
        let elapsed = try await clock.measure {
            for try await chunk in body.chunks(throttle: throttle) { sizes.append(chunk.count) }
        }
        #expect(sizes.allSatisfy { $0 <= 1000 })
        #expect(sizes.reduce(0, +) == Int(body.contentLength!))
        #expect(elapsed >= .milliseconds(20 * (sizes.count - 1)))
    }

    @Test func readErrorsSurfaceFromNext() async throws {
        var body = MultipartBody()
        try body.append(.stream(name: "short", length: 10) { InputStream(data: Data([1])) })
        await #expect(throws: MultipartError.self) {
            for try await _ in body.chunks() {}
        }
    }
}
