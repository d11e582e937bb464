import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// The async layer: parts and their bodies over async sequences of chunks.
@Suite struct MultipartPartsTests {
    func sampleBody() throws -> MultipartBody {
        var body = MultipartBody()
        try body.append(.text("alpha", name: "a"))
        try body.append(.data(Data(repeating: 7, count: 300_000), name: "big", filename: "big.bin"))
        try body.append(.text("charlie", name: "c"))
        return body
    }

    func chunks(of body: MultipartBody, size: Int) throws -> [[UInt8]] {
        let bytes = try body.bytes()
        return stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<min($0 + size, bytes.count)]) }
    }

    @Test func partsAndBodiesFromArraysSlicesAndData() async throws {
        let body = try sampleBody()
        let pieces = try chunks(of: body, size: 1000)
        let arrays = AsyncStream { continuation in
            for piece in pieces { continuation.yield(piece) }
            continuation.finish()
        }
        let datas = AsyncStream { continuation in
            for piece in pieces { continuation.yield(Data(piece)) }
            continuation.finish()
        }
        for parts in [
            try await collect(arrays.multipartParts(boundary: body.boundary)),
            try await collect(datas.multipartParts(boundary: body.boundary)),
        ] {
            #expect(parts.map(\.0) == ["a", "big", "c"])
            #expect(parts[0].1 == Array("alpha".utf8))
            #expect(parts[1].1 == [UInt8](repeating: 7, count: 300_000))
            #expect(parts[2].1 == Array("charlie".utf8))
        }
    }

    func collect<S: AsyncSequence>(_ parts: MultipartParts<S>) async throws -> [(String, [UInt8])] {
        var result: [(String, [UInt8])] = []
        for try await part in parts {
            var bytes: [UInt8] = []
            for try await chunk in part.body { bytes += chunk }
            result.append((part.head.name, bytes))
        }
        return result
    }

    @Test func askingForTheNextPartSkipsTheBody() async throws {
        let body = try sampleBody()
        let pieces = try chunks(of: body, size: 4096)
        let source = AsyncStream { continuation in
            for piece in pieces { continuation.yield(piece) }
            continuation.finish()
        }
        var names: [String] = []
        var values: [String] = []
        for try await part in try source.multipartParts(boundary: body.boundary) {
            names.append(part.head.name)
            if !part.head.isFile {
                values.append(String(decoding: try await part.body.collect(upTo: 100), as: UTF8.self))
            }
        }
        #expect(names == ["a", "big", "c"])
        #expect(values == ["alpha", "charlie"])
    }

    @Test func chunksArePulledOnlyAsPartsAreRead() async throws {
        let body = try sampleBody()
        let pieces = try chunks(of: body, size: 4096)
        let pulled = Locked(0)
        let source = AsyncThrowingStream<[UInt8], any Error>(unfolding: {
            let index = pulled.get()
            guard index < pieces.count else { return nil }
            pulled.set(index + 1)
            return pieces[index]
        })
        var iterator = try source.multipartParts(boundary: body.boundary).makeAsyncIterator()
        let first = try #require(try await iterator.next())
        #expect(first.head.name == "a")
        #expect(pulled.get() == 1)  // the first chunk holds part a's head
        let second = try #require(try await iterator.next())
        #expect(second.head.name == "big")
        var bodyIterator = second.body.makeAsyncIterator()
        _ = try await bodyIterator.next()
        #expect(pulled.get() <= 3, "read \(pulled.get()) of \(pieces.count) chunks for the first bytes of part 1")
        let third = try #require(try await iterator.next())
        #expect(third.head.name == "c")
        #expect(pulled.get() == pieces.count)
        #expect(try await bodyIterator.next() == nil)  // part 1 was skipped
    }

    /// A source that counts its pulls: the body, then an endless epilogue.
    func endlessEpilogue(after body: [UInt8], pulled: Locked<Int>) -> AsyncThrowingStream<[UInt8], any Error> {
        AsyncThrowingStream(unfolding: {
            let index = pulled.get()
            pulled.set(index + 1)
            return index == 0 ? body : [UInt8](repeating: 0x65, count: 65536)
        })
    }

    @Test(.timeLimit(.minutes(5)))
    func theSourceIsNotPulledPastTheCloseDelimiter() async throws {
        let body = crlf("--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n--b--\r\n")
        let pulled = Locked(0)
        var names: [String] = []
        let source = endlessEpilogue(after: body, pulled: pulled)
        for try await part in try source.multipartParts(boundary: MultipartBoundary("b")) {
            names.append(part.head.name)
        }
        #expect(names == ["a"])
        #expect(pulled.get() == 1)
    }

    @Test func theEpilogueIsReadWhenAskedFor() async throws {
        let body = crlf("--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n--b--\r\nepilogue")
        let pulled = Locked(0)
        let source = AsyncThrowingStream<[UInt8], any Error>(unfolding: {
            let index = pulled.get()
            pulled.set(index + 1)
            return index < 3 ? (index == 0 ? body : Array("more".utf8)) : nil
        })
        var count = 0
        for try await _ in try source.multipartParts(boundary: MultipartBoundary("b"), readsEpilogue: true) {
            count += 1
        }
        #expect(count == 1)
        #expect(pulled.get() == 4)  // three chunks and the end
        // Strict mode still checks the close delimiter's line when the rest is read.
        let garbage = AsyncStream<[UInt8]> { continuation in
            continuation.yield(crlf("--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n--b--"))
            continuation.yield(Array("garbage".utf8))
            continuation.finish()
        }
        let error = await #expect(throws: MultipartError.self) {
            for try await _ in try garbage.multipartParts(boundary: MultipartBoundary("b"), readsEpilogue: true) {}
        }
        #expect(error?.code == .invalidDelimiter)
    }

    @Test func malformedInputFailsTheIteration() async throws {
        let truncated = AsyncStream<[UInt8]> { continuation in
            continuation.yield(Array("--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\ncut".utf8))
            continuation.finish()
        }
        let error = await #expect(throws: MultipartError.self) {
            for try await part in try truncated.multipartParts(boundary: MultipartBoundary("b")) {
                for try await _ in part.body {}
            }
        }
        #expect(error?.code == .truncated)
    }

    @Test func cancellationStopsTheIteration() async throws {
        let (source, continuation) = AsyncStream<[UInt8]>.makeStream()
        continuation.yield(Array("--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nstart".utf8))
        let task = Task {
            var received = 0
            for try await part in try source.multipartParts(boundary: MultipartBoundary("b")) {
                for try await bytes in part.body { received += bytes.count }
            }
            return received
        }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        continuation.yield(Array("more".utf8))  // wakes the waiting next(); the driver then sees the cancellation
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        continuation.finish()
    }

    @Test func contentTypeEntryPoint() async throws {
        let body = try sampleBody()
        let source = AsyncStream { continuation in
            for piece in try! chunks(of: body, size: 65536) { continuation.yield(piece[...]) }
            continuation.finish()
        }
        var count = 0
        for try await _ in try source.multipartParts(contentType: body.contentType) { count += 1 }
        #expect(count == 3)
        #expect(throws: MultipartError.self) { try source.multipartParts(contentType: "text/plain") }
    }
}

/// A source that records the actor each `next(isolation:)` was asked on, and whether plain `next()` was used.
struct IsolationRecordingSource: AsyncSequence {
    let chunks: [[UInt8]]
    let seen: Locked<[ObjectIdentifier?]>
    let plainCalls: Locked<Int>

    struct AsyncIterator: AsyncIteratorProtocol {
        var remaining: ArraySlice<[UInt8]>
        let seen: Locked<[ObjectIdentifier?]>
        let plainCalls: Locked<Int>

        mutating func next(isolation actor: isolated (any Actor)?) async -> [UInt8]? {
            seen.set(seen.get() + [actor.map { ObjectIdentifier($0) }])
            return remaining.popFirst()
        }

        mutating func next() async -> [UInt8]? {
            plainCalls.set(plainCalls.get() + 1)
            return remaining.popFirst()
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(remaining: chunks[...], seen: seen, plainCalls: plainCalls)
    }
}

/// An actor that reads a body's parts itself.
actor PartsReader {
    func read(_ source: IsolationRecordingSource, boundary: MultipartBoundary) async throws -> [String] {
        var names: [String] = []
        for try await part in try source.multipartParts(boundary: boundary) {
            names.append(part.head.name)
            _ = try await part.body.collect(upTo: 1 << 20)
        }
        return names
    }
}

@Suite struct PartsIsolationTests {
    @Test func theSourceIsPulledOnTheCallersActorWithoutHops() async throws {
        var body = MultipartBody()
        try body.append(.text("alpha", name: "a"))
        try body.append(.data(Data(repeating: 1, count: 10_000), name: "b", filename: "b.bin"))
        let bytes = try body.bytes()
        let chunks = stride(from: 0, to: bytes.count, by: 1000).map { Array(bytes[$0..<min($0 + 1000, bytes.count)]) }
        let source = IsolationRecordingSource(chunks: chunks, seen: Locked([]), plainCalls: Locked(0))
        let reader = PartsReader()
        #expect(try await reader.read(source, boundary: body.boundary) == ["a", "b"])
        #expect(source.seen.get().count == chunks.count)  // every chunk; none past the close delimiter
        #expect(source.seen.get().allSatisfy { $0 == ObjectIdentifier(reader) })
        #expect(source.plainCalls.get() == 0)
    }
}
