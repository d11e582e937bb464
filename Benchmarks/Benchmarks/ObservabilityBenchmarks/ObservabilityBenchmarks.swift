import Benchmark
import BenchmarkSupport
import Foundation
import InMemoryTracing
import Logging
import Metrics
import Prometheus
import StreamingMultipart
import Tracing

/// What logs, metrics and sniffing cost a spooler together: the same forms spooled with all of them off (no logger,
/// swift-metrics' no-op factory, no first bytes read, no filter) and on (a request's logger at `info`, Prometheus's
/// registry, the first 1,445 bytes read and the README's filter by sniffed type), timed back to back in each
/// iteration so that both sides see the same machine; the figure is on's time over off's, ×1000. Both sides make
/// their spans through the process's tracer, the no-op one (`OBS_PARTS` below adds a recording tracer to "on").
///
/// Two workloads: a 1 GiB file part fed from memory in 64 KiB chunks, and 2,000 forms of a caption and a 4 KiB PNG.
/// Files go to `$BENCHMARK_DIR` (default /tmp; /dev/shm takes the disk's noise out) and are removed untimed.

let folder = ProcessInfo.processInfo.environment["BENCHMARK_DIR"] ?? "/tmp"
let executor = ThreadExecutor()

/// The tracer of the "on" side, bound to its task with `withTracer`; the "off" side has the process's, a no-op.
let tracer = InMemoryTracer()

/// What "on" turns on, from `OBS_PARTS` (comma-separated: `log`, `metrics`, `sniff`, `head` for the first bytes
/// read with no filter, `tracing` for the in-memory tracer); by default logs, metrics and sniffing, which the
/// issue's budget is for (a tracer's cost is its backend's: `tracing` alone measures the in-memory one).
let parts = Set(
    (ProcessInfo.processInfo.environment["OBS_PARTS"] ?? "log,metrics,sniff").split(separator: ",").map(String.init))

/// The two spoolers: everything off, and everything on. Each makes its metrics when it is made, with the factory
/// bound then: the no-op one, or Prometheus's registry.
func spoolers() -> (off: MultipartSpooler, on: MultipartSpooler) {
    var off = MultipartSpooler(directory: folder)
    off.fileHeadBytes = 0
    let prometheus = PrometheusMetricsFactory(registry: PrometheusCollectorRegistry())
    var on =
        parts.contains("metrics")
        ? withMetricsFactory(prometheus) { MultipartSpooler(directory: folder) } : MultipartSpooler(directory: folder)
    if parts.contains("sniff") {
        on.fileFilter = { file in  // the README's, photos by their bytes, and the large file's random bytes
            ["image/png", "image/jpeg", "image/gif", "image/webp", "application/octet-stream"].contains(
                file.sniffedMediaType) ? .store : .refuse(status: 415, message: "photos or bytes, not markup")
        }
    } else if !parts.contains("head") {
        on.fileHeadBytes = 0
    }
    var logger = Logger(label: "request") { StreamLogHandler.standardError(label: $0) }
    logger.logLevel = .info
    logger[metadataKey: "request-id"] = "0123456789abcdef"
    if parts.contains("log") { on.logger = logger }
    return (off, on)
}

/// A caption and a 4 KiB PNG (its signature, then bytes).
let smallForm: (body: [UInt8], contentType: String) = {
    let boundary = "ObservabilityBenchmarkBoundary"
    let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 7, count: 4088)
    let body =
        Array(
            ("--\(boundary)\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nSunset over the bay\r\n"
                + "--\(boundary)\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"photo.png\"\r\n"
                + "Content-Type: image/png\r\n\r\n").utf8) + png + Array("\r\n--\(boundary)--\r\n".utf8)
    return (body, "multipart/form-data; boundary=\(boundary)")
}()

/// Spools `count` pairs of small forms, one with each spooler, alternating which goes first, on the benchmark's
/// thread; the nanoseconds each side took (removals untimed). Form by form, so that a drift of the machine (its
/// clock, the folder's growth) falls on both sides alike.
func spoolSmall(_ spoolers: (off: MultipartSpooler, on: MultipartSpooler), pairs: Int) async throws -> (
    off: UInt64, on: UInt64
) {
    defer { tracer.clearAll() }
    return try await withTaskExecutorPreference(executor) {
        var forms: [SpooledForm] = []
        forms.reserveCapacity(2 * pairs)
        var times: (off: UInt64, on: UInt64) = (0, 0)
        for pair in 0..<pairs {
            for on in pair % 2 == 0 ? [false, true] : [true, false] {
                let chunks = MemoryChunks(smallForm.body)
                let start = Payload.now()
                let form =
                    on && parts.contains("tracing")
                    ? try await withTracer(tracer) {
                        try await spoolers.on.spool(chunks, contentType: smallForm.contentType)
                    }
                    : try await (on ? spoolers.on : spoolers.off).spool(chunks, contentType: smallForm.contentType)
                let end = Payload.now()
                if on { times.on += end - start } else { times.off += end - start }
                forms.append(form)
            }
        }
        for form in forms { form.removeFiles() }
        return times
    }
}

/// Spools the 1 GiB form with `spooler`; nanoseconds taken (its removal untimed).
func spoolLarge(_ spooler: MultipartSpooler, recording: Bool) async throws -> UInt64 {
    defer { tracer.clearAll() }
    return try await withTaskExecutorPreference(executor) {
        let chunks = OneFileForm(size: Payload.gibibyte)
        let start = Payload.now()
        let form =
            recording && parts.contains("tracing")
            ? try await withTracer(tracer) { try await spooler.spool(chunks, contentType: OneFileForm.contentType) }
            : try await spooler.spool(chunks, contentType: OneFileForm.contentType)
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
    Benchmark("Observability: 2,000 pairs of 4 KiB forms, on over off", configuration: configuration) { benchmark in
        let times = try await spoolSmall(spoolers(), pairs: 2000)
        benchmark.measurement(onOverOff, Int(1000 * Double(times.on) / Double(times.off)))
    }
    Benchmark("Observability: 1 GiB file part, on over off", configuration: configuration) { benchmark in
        let (off, on) = spoolers()
        // Off, on, on, off: a drift of the machine within the iteration falls on both sides alike.
        var offTime = try await spoolLarge(off, recording: false)
        var onTime = try await spoolLarge(on, recording: true)
        onTime += try await spoolLarge(on, recording: true)
        offTime += try await spoolLarge(off, recording: false)
        benchmark.measurement(onOverOff, Int(1000 * Double(onTime) / Double(offTime)))
    }
}
