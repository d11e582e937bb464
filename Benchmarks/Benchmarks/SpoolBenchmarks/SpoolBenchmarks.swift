import Benchmark
import BenchmarkSupport
import StreamingMultipart
import StreamingMultipartCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Spooling a form with one large file part, fed from memory in 64 KiB chunks, to a file on disk; against `cat` of
/// as many bytes into a file on the same disk, and SHA-256 alone, in the same run. Removing the file afterwards is
/// timed on neither side: unlinking 1 GiB just written costs ext4 about 65 ms, a tenth of the hash's time, and it is
/// the application's work (it keeps or moves the file), not the spooler's.

let folder = getenv("BENCHMARK_DIR").map { String(cString: $0) } ?? "/tmp"

/// The spooler's own thread: see `ThreadExecutor`.
let executor = ThreadExecutor()

/// Spools the form on `executor`; returns it, its file still on disk (``removeSpooled(_:)`` it after the timed part).
func spool(size: Int, digest: (any SpoolDigest.Type)?) async throws -> SpooledForm {
    try await withTaskExecutorPreference(executor) { try await spoolHere(size: size, digest: digest) }
}

func spoolHere(size: Int, digest: (any SpoolDigest.Type)?) async throws -> SpooledForm {
    let spooler = MultipartSpooler(directory: folder, digest: digest)
    let form = try await spooler.spool(
        OneFileForm(size: size), contentType: OneFileForm.contentType)
    let file = form.files[0]
    precondition(file.byteCount == Int64(size) && (digest == nil || file.digest != nil))
    return form
}

/// Removes what ``spool(size:digest:)`` or ``cat(_:)`` left.
func removeSpooled(_ form: SpooledForm?) {
    form?.removeFiles()
    unlink(catCopy)
}

let catCopy = "\(folder)/streaming-multipart-cat-copy.bin"

/// `cat payload > folder/cat-copy` (``removeSpooled(_:)`` takes the copy away).
func cat(_ payload: String) -> Int {
    let status = system("cat '\(payload)' > '\(catCopy)'")
    precondition(status == 0, "cat failed")
    return 0
}

/// `digest` alone of `size` bytes of the block, 64 KiB at a time (SHA-256 through `SHA256Digest`, swift-crypto).
func hashAlone(size: Int, digest: any SpoolDigest.Type) -> Int {
    func run<Digest: SpoolDigest>(_: Digest.Type) {
        var hash = Digest()
        var iterator = OneFileForm.AsyncIterator(size: size, sent: 0)
        while let chunk = iterator.nextChunk(), iterator.sent <= size { hash.update(chunk.span) }
        blackHole(hash.finalize())
    }
    run(digest)
    return size
}

/// The digests the spool runs with, as the benchmarks name them.
let digests: [(name: String, digest: any SpoolDigest.Type)] = [
    ("SHA-256", SHA256Digest.self), ("CRC-32C", CRC32CDigest.self), ("CRC-32", CRC32Digest.self),
]

/// The spooler's speed as a share of `cat`'s, ×100, both timed back to back in one iteration.
let shareOfCat = BenchmarkMetric.custom("% of cat's speed", polarity: .prefersLarger, useScalingFactor: false)
/// The spooler's speed as a share of its digest's alone, ×100, both timed back to back in one iteration.
let shareOfHash = BenchmarkMetric.custom("% of the hash's speed", polarity: .prefersLarger, useScalingFactor: false)

let benchmarks: @Sendable () -> Void = {
    let size = Payload.gibibyte
    let payload = Payload.file(size: size)
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .peakMemoryResident, Metrics.megabytesPerSecond], timeUnits: .milliseconds,
        warmupIterations: 1, maxDuration: .seconds(60), maxIterations: 7)

    for (name, digest) in digests {
        Benchmark("Spool: 1 GiB file part, \(name)", configuration: configuration) { benchmark in
            let start = Payload.now()
            let form = try await spool(size: size, digest: digest)
            Metrics.record(benchmark, bytes: size, since: start)
            removeSpooled(form)
        }
    }
    Benchmark("Spool: 1 GiB file part, no digest", configuration: configuration) { benchmark in
        let start = Payload.now()
        let form = try await spool(size: size, digest: nil)
        Metrics.record(benchmark, bytes: size, since: start)
        removeSpooled(form)
    }
    Benchmark("Baseline: cat of a 1 GiB file into a file", configuration: configuration) { benchmark in
        let start = Payload.now()
        _ = cat(payload)
        Metrics.record(benchmark, bytes: size, since: start)
        removeSpooled(nil)
    }
    for (name, digest) in digests {
        Benchmark("Baseline: \(name) alone of 1 GiB", configuration: configuration) { benchmark in
            Metrics.measure(benchmark, bytes: size) { hashAlone(size: size, digest: digest) }
        }
    }

    let ratios = Benchmark.Configuration(
        metrics: [shareOfCat], warmupIterations: 1, maxDuration: .seconds(90), maxIterations: 9)
    for (name, digest) in digests.map({ ($0.name, $0.digest as (any SpoolDigest.Type)?) }) + [("no digest", nil)] {
        Benchmark("Share of cat: spool 1 GiB, \(name)", configuration: ratios) { benchmark in
            let start = Payload.now()
            _ = cat(payload)
            let middle = Payload.now()
            removeSpooled(nil)
            let second = Payload.now()
            let form = try await spool(size: size, digest: digest)
            let end = Payload.now()
            removeSpooled(form)
            benchmark.measurement(shareOfCat, Int(100 * Double(middle - start) / Double(end - second)))
        }
    }
    // The spool with a digest against that digest alone: the hash is the floor when it is slower than the disk.
    let hashRatios = Benchmark.Configuration(
        metrics: [shareOfHash], warmupIterations: 1, maxDuration: .seconds(90), maxIterations: 9)
    for (name, digest) in digests {
        Benchmark("Share of the hash alone: spool 1 GiB, \(name)", configuration: hashRatios) { benchmark in
            let start = Payload.now()
            _ = hashAlone(size: size, digest: digest)
            let middle = Payload.now()
            let form = try await spool(size: size, digest: digest)
            let end = Payload.now()
            removeSpooled(form)
            benchmark.measurement(shareOfHash, Int(100 * Double(middle - start) / Double(end - middle)))
        }
    }

    // Memory must not grow with the upload: the same form at 64 MiB and at 1 GiB.
    let memory = Benchmark.Configuration(
        metrics: [.peakMemoryResident], warmupIterations: 0, maxIterations: 1)
    for megabytes in [64, 1024] {
        Benchmark("Memory: spool a \(megabytes) MiB file part, SHA-256", configuration: memory) { _ in
            removeSpooled(try await spool(size: megabytes << 20, digest: SHA256Digest.self))
        }
    }
}
