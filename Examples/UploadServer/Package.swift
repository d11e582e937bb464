// swift-tools-version:6.1
// An upload server on StreamingMultipart and Hummingbird: POST /upload spools a form to disk and answers JSON.
//   swift run UploadServer [--port 8080] [--spool-dir DIR] [--store s3://BUCKET/PREFIX --s3-endpoint URL]
import Foundation
import PackageDescription

/// SwiftPM names a path dependency after its folder, which is wherever the repository was cloned.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

let package = Package(
    name: "UploadServer",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: root.appendingPathComponent("Examples/ExampleTestSupport").path),  // the tests' shared harness
        .package(path: root.path, traits: ["Hummingbird"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),  // the command line
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.30.0"),  // tests only
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),  // --metrics-port
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.29.0"),  // --tls-certificate
    ],
    targets: [
        .executableTarget(
            name: "UploadServer",
            dependencies: [
                .product(name: "StreamingMultipart", package: root.lastPathComponent),
                .product(name: "StreamingMultipartNIO", package: root.lastPathComponent),
                .product(name: "StreamingMultipartServer", package: root.lastPathComponent),
                .product(name: "StreamingMultipartCrypto", package: root.lastPathComponent),
                .product(name: "StreamingMultipartS3", package: root.lastPathComponent),
                .product(name: "StreamingMultipartHummingbird", package: root.lastPathComponent),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Web")]  // the resumable upload page and its module (WebFiles)
        ),
        .executableTarget(
            // The same server's upload route in 30 lines: what a new app writes with StreamingMultipartHummingbird.
            name: "SmallUploadServer",
            dependencies: [
                .product(name: "StreamingMultipart", package: root.lastPathComponent),
                .product(name: "StreamingMultipartHummingbird", package: root.lastPathComponent),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        .testTarget(
            name: "UploadServerTests",
            dependencies: [
                .product(name: "ExampleTestSupport", package: "ExampleTestSupport"),
                "UploadServer", "SmallUploadServer",  // so that `swift test` builds the binaries the tests start
                .product(name: "StreamingMultipart", package: root.lastPathComponent),
                .product(name: "StreamingMultipartCrypto", package: root.lastPathComponent),
                .product(name: "StreamingMultipartNIO", package: root.lastPathComponent),
                .product(name: "StreamingMultipartURLSession", package: root.lastPathComponent),
                .product(name: "StreamingMultipartAsyncHTTPClient", package: root.lastPathComponent),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
