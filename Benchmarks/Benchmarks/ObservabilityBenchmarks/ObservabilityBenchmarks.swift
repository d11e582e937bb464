import Benchmark
import BenchmarkSupport
import Foundation
import InMemoryTracing
import Instrumentation
import Logging
import Metrics
import Prometheus
import StreamingMultipart
import Synchronization
import Tracing

/// What logs, metrics, traces and sniffing cost a spooler together: the same forms spooled with all of them off (no
/// logger, swift-metrics' no-op factory, no-op spans, no first bytes read) and on (a request's logger at `info`,
/// Prometheus's registry, an in-memory tracer recording every span, the first 1,445 bytes read and sniffed), timed
/// back to back in each iteration so that both sides see the same machine; the figure is on's time over off's, ×1000.
///
/// Two workloads: a 1 GiB file part fed from memory in 64 KiB chunks, and 2,000 forms of a caption and a 4 KiB PNG.
/// Files go to `$BENCHMARK_DIR` (default /tmp; /dev/shm takes the disk's noise out) and are removed untimed.

let folder = ProcessInfo.processInfo.environment["BENCHMARK_DIR"] ?? "/tmp"
let executor = ThreadExecutor()

/// The process's tracer: spans are no-ops until a benchmark turns recording on (`InstrumentationSystem` takes one
/// bootstrap, and swift-distributed-tracing 1.7 has no task-local tracer). Off costs one atomic load a span.
final class SwitchedTracer: Tracer, Sendable {
    let recording = Atomic<Bool>(false)
    let memory = InMemoryTracer()
    let off = NoOpTracer()

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> InstrumentationContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> any Span {
        if recording.load(ordering: .relaxed) {
            return memory.startSpan(
                operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID,
                line: line)
        }
        return off.startSpan(
            operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID,
            line: line)
    }

    func forceFlush() {}
    func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier, into context: inout InstrumentationContext, using extractor: Extract
    ) where Extract.Carrier == Carrier {}
    func inject<Carrier, Inject: Injector>(
        _ context: InstrumentationContext, into carrier: inout Carrier, using injector: Inject
    ) where Inject.Carrier == Carrier {}
}

let tracer: SwitchedTracer = {
    let tracer = SwitchedTracer()
    InstrumentationSystem.bootstrap(tracer)
    return tracer
}()

/// The two spoolers: everything off, and everything on. Each makes its metrics when it is made, with the factory
/// bound then: the no-op one, or Prometheus's registry.
func spoolers() -> (off: MultipartSpooler, on: MultipartSpooler) {
    var off = MultipartSpooler(directory: folder)
    off.fileHeadBytes = 0
    var on = withMetricsFactory(PrometheusMetricsFactory(registry: PrometheusCollectorRegistry())) {
        MultipartSpooler(directory: folder)
    }
    var logger = Logger(label: "request") { StreamLogHandler.standardError(label: $0) }
    logger.logLevel = .info
    logger[metadataKey: "request-id"] = "0123456789abcdef"
    on.logger = logger
    return (off, on)
}

/// A caption and a 4 KiB PNG (its signature, then bytes).
let smallForm: (body: [UInt8], contentType: String) = {
    var body = MultipartBody()
    try! body.append(.text("Sunset over the bay", name: "caption"))
    let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 7, count: 4088)
    try! body.append(.data(Data(png), name: "photo", filename: "photo.png", contentType: "image/png"))
    return (try! body.bytes(), body.contentType)
}()

/// Spools `count` small forms with `spooler`, on the benchmark's thread; nanoseconds taken (removals untimed).
func spoolSmall(_ spooler: MultipartSpooler, count: Int, recording: Bool) async throws -> UInt64 {
    tracer.recording.store(recording, ordering: .relaxed)
    defer { tracer.memory.clearAll() }
    return try await withTaskExecutorPreference(executor) {
        var forms: [SpooledForm] = []
        forms.reserveCapacity(count)
        let start = Payload.now()
        for _ in 0..<count {
            forms.append(try await spooler.spool(MemoryChunks(smallForm.body), contentType: smallForm.contentType))
        }
        let end = Payload.now()
        for form in forms { form.removeFiles() }
        return end - start
    }
}

/// Spools the 1 GiB form with `spooler`; nanoseconds taken (its removal untimed).
func spoolLarge(_ spooler: MultipartSpooler, recording: Bool) async throws -> UInt64 {
    tracer.recording.store(recording, ordering: .relaxed)
    defer { tracer.memory.clearAll() }
    return try await withTaskExecutorPreference(executor) {
        let start = Payload.now()
        let form = try await spooler.spool(OneFileForm(size: Payload.gibibyte), contentType: OneFileForm.contentType)
        let end = Payload.now()
        precondition(form.files.first?.byteCount == Int64(Payload.gibibyte))
        form.removeFiles()
        return end - start
    }
}

/// On's time over off's, ×1000: 1,020 is 2 % slower.
let onOverOff = BenchmarkMetric.custom("on/off time ×1000", polarity: .prefersSmaller, useScalingFactor: false)

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [onOverOff], warmupIterations: 1, maxDuration: .seconds(120), maxIterations: 11)
    Benchmark("Observability: 2,000 forms of 4 KiB, on over off", configuration: configuration) { benchmark in
        let (off, on) = spoolers()
        // Alternating halves, so that neither side always runs first.
        let offFirst = try await spoolSmall(off, count: 1000, recording: false)
        let onTime = try await spoolSmall(on, count: 2000, recording: true)
        let offSecond = try await spoolSmall(off, count: 1000, recording: false)
        benchmark.measurement(onOverOff, Int(1000 * Double(onTime) / Double(offFirst + offSecond)))
    }
    Benchmark("Observability: 1 GiB file part, on over off", configuration: configuration) { benchmark in
        let (off, on) = spoolers()
        let offTime = try await spoolLarge(off, recording: false)
        let onTime = try await spoolLarge(on, recording: true)
        benchmark.measurement(onOverOff, Int(1000 * Double(onTime) / Double(offTime)))
    }
}
