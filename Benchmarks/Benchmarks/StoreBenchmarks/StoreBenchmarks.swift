import Benchmark
import BenchmarkSupport
import Foundation
import StreamingMultipart
import StreamingMultipartCrypto
import StreamingMultipartS3

/// The S3 store's throughput against the local folder's: a form of one 256 MiB file part, fed from memory in 64 KiB
/// chunks, spooled with SHA-256 into a folder on disk and into an S3 bucket (8 MiB parts, 4 in flight), back to back
/// in each iteration so that the machine's noise hits both alike.
///
/// The S3 endpoint comes from the environment: `S3_BENCH_ENDPOINT` and `S3_BENCH_BUCKET` (an existing bucket), with
/// `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`. `Benchmarks/s3-store.sh` starts moto or a one-node radosgw, makes
/// the bucket and runs this suite; without the variables only the local-folder benchmark runs, and a line on
/// standard error says why.

let size = 256 << 20
let folder = ProcessInfo.processInfo.environment["BENCHMARK_DIR"] ?? "/tmp"

/// Spools the form through `spooler`, checks the file, and removes it (from `store` when it went there); returns the
/// bytes spooled.
func spool(_ spooler: MultipartSpooler, store: (any MultipartFileStore)? = nil) async throws -> Int {
    let form = try await spooler.spool(OneFileForm(size: size), contentType: OneFileForm.contentType)
    let file = form.files[0]
    precondition(file.byteCount == Int64(size) && file.digest != nil, "spooled \(file.byteCount) bytes")
    if let store, let object = file.storedObject { try await store.remove(object) }
    form.removeFiles()
    return size
}

/// The S3 store at the endpoint the environment names, or nil (saying why) when it names none.
func s3Store() throws -> S3Store? {
    let environment = ProcessInfo.processInfo.environment
    guard let endpoint = environment["S3_BENCH_ENDPOINT"].flatMap(URL.init(string:)),
        let bucket = environment["S3_BENCH_BUCKET"]
    else {
        FileHandle.standardError.write(
            Data(
                "StoreBenchmarks: S3_BENCH_ENDPOINT and S3_BENCH_BUCKET are unset; the S3 store is not measured\n".utf8)
        )
        return nil
    }
    let configuration = try S3Store.Configuration(
        endpoint: endpoint, bucket: bucket, prefix: "bench/", credentials: .static(try S3Credentials.environment()))
    return try S3Store(configuration: configuration)
}

/// The S3 store's speed as a share of the local folder's, ×100.
let shareOfLocal = BenchmarkMetric.custom("% of the folder's speed", polarity: .prefersLarger, useScalingFactor: false)

let benchmarks: @Sendable () -> Void = {
    let local = MultipartSpooler(directory: folder, digest: SHA256Digest.self)
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .peakMemoryResident, Metrics.megabytesPerSecond], timeUnits: .milliseconds,
        warmupIterations: 1, maxDuration: .seconds(60), maxIterations: 7)
    Benchmark("Store: 256 MiB file part into the local folder, SHA-256", configuration: configuration) { benchmark in
        let start = Payload.now()
        _ = try await spool(local)
        Metrics.record(benchmark, bytes: size, since: start)
    }
    guard let store = try! s3Store() else { return }
    let s3 = MultipartSpooler(store: store, digest: SHA256Digest.self)
    Benchmark("Store: 256 MiB file part into S3, SHA-256", configuration: configuration) { benchmark in
        let start = Payload.now()
        _ = try await spool(s3, store: store)
        Metrics.record(benchmark, bytes: size, since: start)
    }
    let ratios = Benchmark.Configuration(
        metrics: [shareOfLocal], warmupIterations: 1, maxDuration: .seconds(90), maxIterations: 7)
    Benchmark("Share of the folder's speed: S3 store, 256 MiB", configuration: ratios) { benchmark in
        let start = Payload.now()
        _ = try await spool(local)
        let middle = Payload.now()
        _ = try await spool(s3, store: store)
        let end = Payload.now()
        benchmark.measurement(shareOfLocal, Int(100 * Double(middle - start) / Double(end - middle)))
    }
}
