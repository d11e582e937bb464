import Foundation
import MultipartTestSupport
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
        try await expectCancellingTheTaskClosesTheFile { $0.chunks(size: 1024) }
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
