// swift-tools-version:6.1
// Benchmarks for StreamingMultipart, a package of their own so that users never fetch benchmark dependencies.
//   cd Benchmarks && swift package benchmark
import Foundation
import PackageDescription

/// SwiftPM names a path dependency after its folder, which is wherever the repository was cloned.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

let package = Package(
    name: "StreamingMultipartBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: root.path),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/vapor/multipart-kit", exact: "4.7.1"),
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
    ],
    targets: [
        .target(
            name: "BenchmarkSupport",
            dependencies: [.product(name: "Benchmark", package: "benchmark")],
            path: "Sources/BenchmarkSupport"
        ),
        .executableTarget(
            name: "BuildBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "StreamingMultipart", package: root.lastPathComponent),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/BuildBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "MultipartKitBuildBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/MultipartKitBuildBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "ParseBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "StreamingMultipart", package: root.lastPathComponent),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/ParseBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "AsyncBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "StreamingMultipart", package: root.lastPathComponent),
                .product(name: "StreamingMultipartNIO", package: root.lastPathComponent),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/AsyncBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "SpoolBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "StreamingMultipart", package: root.lastPathComponent),
                .product(name: "StreamingMultipartCrypto", package: root.lastPathComponent),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/SpoolBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "StoreBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "StreamingMultipart", package: root.lastPathComponent),
                .product(name: "StreamingMultipartCrypto", package: root.lastPathComponent),
                .product(name: "StreamingMultipartS3", package: root.lastPathComponent),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/StoreBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "MultipartKitFormBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/MultipartKitFormBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "MultipartKitParseBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/MultipartKitParseBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
