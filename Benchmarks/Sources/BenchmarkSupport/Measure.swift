import Benchmark

/// The custom metrics every suite reports, so that ratios between suites read off one scale.
public enum Metrics {
    /// 10^6 bytes of body per second.
    public static let megabytesPerSecond = BenchmarkMetric.custom(
        "MB/s", polarity: .prefersLarger, useScalingFactor: false)
    /// Thousands of parts per second.
    public static let partsPerSecond = BenchmarkMetric.custom(
        "k parts/s", polarity: .prefersLarger, useScalingFactor: false)

    /// Times `work`, which handles `bytes` bytes (and `parts` parts), and records MB/s (and k parts/s).
    public static func measure<T>(_ benchmark: Benchmark, bytes: Int, parts: Int? = nil, _ work: () throws -> T)
        rethrows
    {
        let start = Payload.now()
        blackHole(try work())
        let nanoseconds = Payload.now() - start
        benchmark.measurement(megabytesPerSecond, Payload.megabytesPerSecond(bytes: bytes, nanoseconds: nanoseconds))
        if let parts {
            benchmark.measurement(partsPerSecond, Int(Double(parts) / (Double(nanoseconds) / 1e9) / 1e3))
        }
    }

    /// Records MB/s (and k parts/s) for work on `bytes` bytes (and `parts` parts) that began at `start`
    /// (`Payload.now()`): for async work, which `measure` cannot wrap.
    public static func record(_ benchmark: Benchmark, bytes: Int, parts: Int? = nil, since start: UInt64) {
        let nanoseconds = Payload.now() - start
        benchmark.measurement(megabytesPerSecond, Payload.megabytesPerSecond(bytes: bytes, nanoseconds: nanoseconds))
        if let parts {
            benchmark.measurement(partsPerSecond, Int(Double(parts) / (Double(nanoseconds) / 1e9) / 1e3))
        }
    }

    /// Times `work`, which returns how many bytes it produced, and records MB/s.
    public static func measure(_ benchmark: Benchmark, _ work: () throws -> Int) rethrows {
        let start = Payload.now()
        let bytes = try work()
        benchmark.measurement(
            megabytesPerSecond, Payload.megabytesPerSecond(bytes: bytes, nanoseconds: Payload.now() - start))
    }
}
