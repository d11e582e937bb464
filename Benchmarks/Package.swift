// swift-tools-version:6.1
// Benchmarks for StreamingMultipart, a package of their own so that users never fetch benchmark dependencies.
//   cd Benchmarks && swift package benchmark
import Foundation
import PackageDescription

/// SwiftPM names a path dependency after its folder, which is wherever the repository was cloned.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

/// A benchmark executable in `Benchmarks/<name>`: BenchmarkSupport, the named products of this repository, `others`,
/// and package-benchmark with its plugin.
func benchmark(_ name: String, ours: [String] = [], others: [Target.Dependency] = []) -> Target {
    .executableTarget(
        name: name,
        dependencies: ["BenchmarkSupport"] + ours.map { .product(name: $0, package: root.lastPathComponent) } + others
            + [.product(name: "Benchmark", package: "benchmark")],
        path: "Benchmarks/\(name)",
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
}

/// MultipartKit, with the NIOCore its benchmarks name (its ByteBuffer).
let multipartKit: [Target.Dependency] = [
    .product(name: "MultipartKit", package: "multipart-kit"), .product(name: "NIOCore", package: "swift-nio"),
]

let package = Package(
    name: "StreamingMultipartBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: root.path),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/vapor/multipart-kit", exact: "4.7.1"),
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),  // a real metrics backend
    ],
    targets: [
        .target(
            name: "BenchmarkSupport",
            dependencies: [.product(name: "Benchmark", package: "benchmark")],
            path: "Sources/BenchmarkSupport"
        ),
        benchmark("BuildBenchmarks", ours: ["StreamingMultipart"]),
        benchmark("MultipartKitBuildBenchmarks", others: multipartKit),
        benchmark("ParseBenchmarks", ours: ["StreamingMultipart"]),
        benchmark(
            "AsyncBenchmarks", ours: ["StreamingMultipart", "StreamingMultipartNIO"],
            others: [.product(name: "NIOCore", package: "swift-nio")]),
        benchmark(
            "SpoolBenchmarks", ours: ["StreamingMultipart", "StreamingMultipartCrypto"],
            others: [.product(name: "Crypto", package: "swift-crypto")]),
        benchmark(
            "ObservabilityBenchmarks", ours: ["StreamingMultipart"],
            others: [
                .product(name: "Logging", package: "swift-log"), .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]),
        benchmark("StoreBenchmarks", ours: ["StreamingMultipart", "StreamingMultipartCrypto", "StreamingMultipartS3"]),
        benchmark("MultipartKitFormBenchmarks", others: multipartKit),
        benchmark("MultipartKitParseBenchmarks", others: multipartKit),
    ],
    swiftLanguageModes: [.v6]
)
