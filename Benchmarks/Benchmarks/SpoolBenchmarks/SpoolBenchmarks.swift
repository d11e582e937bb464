import Benchmark
import BenchmarkSupport
import Crypto
import StreamingMultipart
import StreamingMultipartCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Spooling a form with one large file part, fed from memory in 64 KiB chunks, to a file on disk; against `cat` of
/// as many bytes into a file on the same disk, and SHA-256 alone, in the same run.

let folder = getenv("BENCHMARK_DIR").map { String(cString: $0) } ?? "/tmp"

/// The spooler's own thread: see `ThreadExecutor`.
let executor = ThreadExecutor()

/// Spools the form and removes the file, on `executor`; returns the bytes spooled.
func spool(size: Int, digest: (any SpoolDigest.Type)?) async throws -> Int {
    try await withTaskExecutorPreference(executor) { try await spoolHere(size: size, digest: digest) }
}

func spoolHere(size: Int, digest: (any SpoolDigest.Type)?) async throws -> Int {
    let spooler = MultipartSpooler(directory: folder, digest: digest)
    let form = try await spooler.spool(
        OneFileForm(size: size), contentType: OneFileForm.contentType)
    let file = form.files[0]
    precondition(file.byteCount == Int64(size) && (digest == nil || file.digest != nil))
    form.removeFiles()
    return size
}

/// `cat payload > folder/cat-copy`, then removes the copy.
func cat(_ payload: String) -> Int {
    let copy = "\(folder)/streaming-multipart-cat-copy.bin"
    let status = system("cat '\(payload)' > '\(copy)'")
    precondition(status == 0, "cat failed")
    unlink(copy)
    return 0
}

/// SHA-256 of `size` bytes of the block, 64 KiB at a time.
func sha256(size: Int) -> Int {
    var hash = SHA256()
    var iterator = OneFileForm.AsyncIterator(size: size, sent: 0)
    while let chunk = iterator.nextChunk(), iterator.sent <= size {
        chunk.withUnsafeBytes { hash.update(bufferPointer: $0) }
    }
    blackHole(hash.finalize())
    return size
}

/// The spooler's speed as a share of `cat`'s, ×100, both timed back to back in one iteration.
let shareOfCat = BenchmarkMetric.custom("% of cat's speed", polarity: .prefersLarger, useScalingFactor: false)

let benchmarks: @Sendable () -> Void = {
    let size = Payload.gibibyte
    let payload = Payload.file(size: size)
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .peakMemoryResident, Metrics.megabytesPerSecond], timeUnits: .milliseconds,
        warmupIterations: 1, maxDuration: .seconds(60), maxIterations: 7)

    Benchmark("Spool: 1 GiB file part, SHA-256", configuration: configuration) { benchmark in
        let start = Payload.now()
        _ = try await spool(size: size, digest: SHA256Digest.self)
        Metrics.record(benchmark, bytes: size, since: start)
    }
    Benchmark("Spool: 1 GiB file part, no digest", configuration: configuration) { benchmark in
        let start = Payload.now()
        _ = try await spool(size: size, digest: nil)
        Metrics.record(benchmark, bytes: size, since: start)
    }
    Benchmark("Baseline: cat of a 1 GiB file into a file", configuration: configuration) { benchmark in
        let start = Payload.now()
        _ = cat(payload)
        Metrics.record(benchmark, bytes: size, since: start)
    }
    Benchmark("Baseline: SHA-256 alone of 1 GiB", configuration: configuration) { benchmark in
        Metrics.measure(benchmark, bytes: size) { sha256(size: size) }
    }

    let ratios = Benchmark.Configuration(
        metrics: [shareOfCat], warmupIterations: 1, maxDuration: .seconds(90), maxIterations: 9)
    for (name, digest) in [("SHA-256", SHA256Digest.self as (any SpoolDigest.Type)?), ("no digest", nil)] {
        Benchmark("Share of cat: spool 1 GiB, \(name)", configuration: ratios) { benchmark in
            let start = Payload.now()
            _ = cat(payload)
            let middle = Payload.now()
            _ = try await spool(size: size, digest: digest)
            let end = Payload.now()
            benchmark.measurement(shareOfCat, Int(100 * Double(middle - start) / Double(end - middle)))
        }
    }

    // Memory must not grow with the upload: the same form at 64 MiB and at 1 GiB.
    let memory = Benchmark.Configuration(
        metrics: [.peakMemoryResident], warmupIterations: 0, maxIterations: 1)
    for megabytes in [64, 1024] {
        Benchmark("Memory: spool a \(megabytes) MiB file part, SHA-256", configuration: memory) { _ in
            _ = try await spool(size: megabytes << 20, digest: SHA256Digest.self)
        }
    }
}
