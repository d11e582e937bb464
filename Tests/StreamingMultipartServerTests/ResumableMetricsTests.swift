import Foundation
import Metrics
import MetricsTestKit
import MultipartTestSupport
import NIOCore
import StreamingMultipart
import StreamingMultipartServer
import Testing

/// A resumable upload counts its resumptions and its abandonment, and its pause is a gauge that comes back to zero
/// however the pause ends. The window passes on a test's clock.
@Suite struct ResumableMetricsTests {
    struct Dropped: Error {}

    /// A request whose body is `text`, ending with `error` (the connection dropped) or not.
    func request(_ text: String, dropping: Bool) -> AsyncThrowingStream<ByteBuffer, any Error> {
        let (stream, feed) = AsyncThrowingStream.makeStream(of: ByteBuffer.self)
        feed.yield(ByteBuffer(string: text))
        feed.finish(throwing: dropping ? Dropped() : nil)
        return stream
    }

    func reading(_ body: ResumableBody) -> Task<Int, any Error> {
        Task {
            var count = 0
            for try await chunk in body { count += chunk.readableBytes }
            return count
        }
    }

    @Test func twoDropsAreTwoResumptionsAndTwoPausesThatEnd() async throws {
        let metrics = TestMetrics()
        let body = withMetricsFactory(metrics) { ResumableBody(window: .seconds(60), metrics: ResumableMetrics()) }
        let read = reading(body)
        await #expect(throws: Dropped.self) {
            try await body.append(from: 0, request("ab", dropping: true), completes: true)
        }
        await #expect(throws: Dropped.self) {
            try await body.append(from: 2, request("cd", dropping: true), completes: true)
        }
        try await body.append(from: 4, request("ef", dropping: false), completes: true)
        #expect(try await read.value == 6)
        #expect(metrics.counterTotal(label: MultipartMetrics.resumptions) == 2)
        #expect(metrics.counterTotal(label: MultipartMetrics.resumableAbandoned) == 0)
        #expect(try metrics.expectMeter(MultipartMetrics.uploadsPaused).values == [1, 0, 1, 0])
    }

    @Test func anUploadLeftPastItsWindowIsCountedAbandoned() async throws {
        let metrics = TestMetrics()
        let clock = ManualClock()
        let body = withMetricsFactory(metrics) {
            ResumableBody(window: .seconds(60), clock: clock, metrics: ResumableMetrics())
        }
        let read = reading(body)
        await #expect(throws: Dropped.self) {
            try await body.append(from: 0, request("ab", dropping: true), completes: true)
        }
        await clock.waitForSleepers(2)  // the lifetime and the window
        clock.advance(by: .seconds(60))
        await #expect(throws: MultipartError.self) { try await read.value }
        #expect(body.isOver)
        #expect(metrics.counterTotal(label: MultipartMetrics.resumableAbandoned) == 1)
        #expect(metrics.counterTotal(label: MultipartMetrics.resumptions) == 0)
        #expect(try metrics.expectMeter(MultipartMetrics.uploadsPaused).values == [1, 0])
    }
}
