import Foundation
import InMemoryLogging
import InMemoryTracing
import Logging
import Metrics
import MetricsTestKit
import MultipartTestSupport
import Testing
import Tracing

@testable import StreamingMultipart

/// A spooler counts what it did (forms started, completed, bytes received and spooled), times forms and files, keeps
/// the gauges of forms in flight and budgets in use, and a refusal is counted by status and code; no client text is
/// ever a dimension. Each test binds a factory of its own to its task (`withMetricsFactory`), so tests running at
/// once do not count into each other's.
@Suite struct SpoolMetricsTests {
    /// Two fields, a file kept in memory and a file past the memory threshold, named with text a client chose.
    static func form() throws -> (body: [UInt8], contentType: String, spooled: Int) {
        var body = MultipartBody()
        try body.append(.text("hello", name: "caption<script>"))
        try body.append(.text("x", name: "tag"))
        try body.append(.data(Data(repeating: 7, count: 100), name: "small", filename: "evil\nname.txt"))
        try body.append(.data(Data(repeating: 1, count: 300_000), name: "big", filename: "photo.png"))
        return (try body.bytes(), body.contentType, 300_000)
    }

    @Test func aFormIsCountedTimedAndItsGaugesComeBackToZero() async throws {
        let metrics = TestMetrics()
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (body, contentType, spooled) = try Self.form()
        try await withMetricsFactory(metrics) {
            let budget = MultipartSpooler.DiskBudget(bytes: 1 << 20)
            var limits = MultipartSpooler.Limits.untimed
            limits.memoryThreshold = 1000
            let spooler = MultipartSpooler(directory: folder.url, limits: limits, diskBudget: budget)
            let form = try await spooler.spool(chunkStream(body, size: 4096), contentType: contentType)
            #expect(form.files.count == 2)
            #expect(try metrics.expectMeter(MultipartMetrics.diskBudgetInUse).lastValue == Double(spooled))
            form.removeFiles()
        }
        #expect(metrics.counterTotal(label: MultipartMetrics.uploadsStarted) == 1)
        #expect(metrics.counterTotal(label: MultipartMetrics.uploadsCompleted) == 1)
        #expect(metrics.counterTotal(label: MultipartMetrics.bytesReceived) == Int64(body.count))
        #expect(metrics.counterTotal(label: MultipartMetrics.bytesSpooled) == Int64(spooled))
        #expect(try metrics.expectTimer(MultipartMetrics.formDuration).values.count == 1)
        #expect(try metrics.expectTimer(MultipartMetrics.fileDuration).values.count == 2)
        let inFlight = try metrics.expectMeter(MultipartMetrics.uploadsInFlight)
        #expect(inFlight.values == [1, 0])
        #expect(try metrics.expectMeter(MultipartMetrics.diskBudgetInUse).lastValue == 0)
        Self.expectNoClientText(in: metrics)
    }

    @Test func aRefusedFormIsStartedNotCompletedAndItsRefusalIsCountedByStatusAndCode() async throws {
        let metrics = TestMetrics()
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (body, contentType, _) = try Self.form()
        let recorded = InMemoryLogHandler()
        await withMetricsFactory(metrics) {
            var limits = MultipartSpooler.Limits.untimed
            limits.maxFiles = 1
            let spooler = MultipartSpooler(directory: folder.url, limits: limits)
            do {
                _ = try await spooler.spool(chunkStream(body, size: 4096), contentType: contentType)
                Issue.record("a second file passed maxFiles 1")
            } catch {
                MultipartFormError(error).report(to: Logger(label: "test", factory: { _ in recorded }))
            }
        }
        #expect(metrics.counterTotal(label: MultipartMetrics.uploadsStarted) == 1)
        #expect(metrics.counterTotal(label: MultipartMetrics.uploadsCompleted) == 0)
        let refused = try metrics.expectCounter(
            MultipartMetrics.uploadsRefused, [("status", "413"), ("code", "limitExceeded")])
        #expect(refused.totalValue == 1)
        #expect(try metrics.expectMeter(MultipartMetrics.uploadsInFlight).values == [1, 0])
        #expect(try folder.contents().isEmpty)
        #expect(recorded.entries.count == 1)
        Self.expectNoClientText(in: metrics)
    }

    @Test func anURLEncodedFormCountsItsBytesToo() async throws {
        let metrics = TestMetrics()
        let body = Array("a=1&b=two&c=%E2%82%AC".utf8)
        try await withMetricsFactory(metrics) {
            let spooler = MultipartSpooler(directory: NSTemporaryDirectory(), limits: .untimed)
            let form = try await spooler.spool(
                chunkStream(body, size: 5), contentType: "application/x-www-form-urlencoded")
            #expect(form.fields.count == 3)
        }
        #expect(metrics.counterTotal(label: MultipartMetrics.bytesReceived) == Int64(body.count))
        #expect(metrics.counterTotal(label: MultipartMetrics.uploadsCompleted) == 1)
    }

    @Test func aMemoryBudgetsGaugeFollowsWhatItHolds() async throws {
        let metrics = TestMetrics()
        try await withMetricsFactory(metrics) {
            let budget = MultipartMemoryBudget(bytes: 2 << 20)
            #expect(budget.tryReserve(1 << 20))
            try await budget.reserve(1 << 20)
            #expect(!budget.tryReserve(1))
            budget.release(1 << 20)
            budget.release(1 << 20)
        }
        let gauge = try metrics.expectMeter(MultipartMetrics.memoryBudgetInUse)
        let mebibyte = Double(1 << 20)
        #expect(gauge.values == [mebibyte, 2 * mebibyte, mebibyte, 0])
    }

    /// Spans nest form → file, the file's span carries the sniffed type (the package's own table), and no span
    /// carries the client's names.
    @Test func aFormsSpanHoldsItsFilesSpans() async throws {
        let tracer = InMemoryTracer()
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (body, contentType, _) = try Self.form()
        let root = try await withTracer(tracer) {
            try await withSpan("test.root") { root in
                let spooler = MultipartSpooler(directory: folder.url, limits: .untimed)
                let form = try await spooler.spool(chunkStream(body, size: 4096), contentType: contentType)
                form.removeFiles()
                return root.context.inMemorySpanContext!
            }
        }
        let spans = tracer.finishedSpans
        let forms = spans.filter { $0.operationName == MultipartMetrics.formSpan }
        let files = spans.filter { $0.operationName == MultipartMetrics.fileSpan }
        try #require(forms.count == 1)
        #expect(forms[0].spanContext.parentSpanID == root.spanID)
        #expect(forms[0].attributes["multipart.files"]?.toSpanAttribute() == .int64(2))
        #expect(files.count == 2)
        #expect(files.allSatisfy { $0.spanContext.parentSpanID == forms[0].spanContext.spanID })
        #expect(files.map { $0.attributes["multipart.part_index"]?.toSpanAttribute() } == [.int64(2), .int64(3)])
        #expect(files[0].attributes["multipart.sniffed_type"]?.toSpanAttribute() == .string("application/octet-stream"))
        var values: [String] = []
        func note(_ key: String, _ value: SpanAttribute) { values.append("\(key)=\(value)") }
        for span in spans { span.attributes.forEach(note) }
        #expect(!values.isEmpty)
        #expect(!values.contains { $0.contains("evil") || $0.contains("photo") || $0.contains("caption") })
    }

    /// Every dimension of every metric recorded is one of the package's own: never a field's name or a filename.
    static func expectNoClientText(in metrics: TestMetrics) {
        let dimensions =
            metrics.counters.flatMap(\.dimensions) + metrics.meters.flatMap(\.dimensions)
            + metrics.timers.flatMap(\.dimensions)
        for (key, value) in dimensions {
            #expect(["status", "code"].contains(key), "dimension \(key)=\(value)")
        }
    }
}
