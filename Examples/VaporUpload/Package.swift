// swift-tools-version:6.1
// A Vapor 4 upload route on StreamingMultipart: the body streams into the spooler and the decoder, where
// MultipartKit's route (beside it, for comparison) collects it in memory first.
//   swift run VaporUpload serve --port 8080
import Foundation
import PackageDescription

/// SwiftPM names a path dependency after its folder, which is wherever the repository was cloned.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

let package = Package(
    name: "VaporUpload",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: root.appendingPathComponent("Examples/ExampleTestSupport").path),  // the tests' shared harness
        .package(path: root.path, traits: ["Vapor"]),
        .package(url: "https://github.com/vapor/vapor", exact: "4.122.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.29.0"),  // TLS: `serveTLS`
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),  // tests: NIO's async producer
    ],
    targets: [
        .target(
            name: "VaporUpload",
            dependencies: [
                .product(name: "StreamingMultipart", package: root.lastPathComponent),
                .product(name: "StreamingMultipartNIO", package: root.lastPathComponent),
                .product(name: "StreamingMultipartServer", package: root.lastPathComponent),
                .product(name: "StreamingMultipartCrypto", package: root.lastPathComponent),
                .product(name: "StreamingMultipartVapor", package: root.lastPathComponent),
                .product(name: "Vapor", package: "vapor"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .executableTarget(
            name: "VaporUploadServer",
            dependencies: [
                "VaporUpload", .product(name: "StreamingMultipartServer", package: root.lastPathComponent),
                .product(name: "Vapor", package: "vapor"),
            ]
        ),
        .executableTarget(  // `smallApp`, alone: what a new app writes with StreamingMultipartVapor
            name: "SmallVaporUpload",
            dependencies: [
                "VaporUpload", .product(name: "StreamingMultipart", package: root.lastPathComponent),
                .product(name: "Vapor", package: "vapor"),
            ]
        ),
        .testTarget(
            name: "VaporUploadTests",
            dependencies: [
                .product(name: "ExampleTestSupport", package: "ExampleTestSupport"),
                "VaporUpload", .product(name: "StreamingMultipart", package: root.lastPathComponent),
                .product(name: "StreamingMultipartCrypto", package: root.lastPathComponent),
                .product(name: "StreamingMultipartNIO", package: root.lastPathComponent),
                .product(name: "StreamingMultipartServer", package: root.lastPathComponent),
                .product(name: "StreamingMultipartVapor", package: root.lastPathComponent),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Vapor", package: "vapor"), .product(name: "VaporTesting", package: "vapor"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
