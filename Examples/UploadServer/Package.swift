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
        .package(path: root.path),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.34.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),  // NIOEmbedded, for the tests
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.30.0"),  // tests only
    ],
    targets: [
        .executableTarget(
            name: "UploadServer",
            dependencies: [
                .product(name: "StreamingMultipart", package: root.lastPathComponent),
                .product(name: "StreamingMultipartNIO", package: root.lastPathComponent),
                .product(name: "StreamingMultipartCrypto", package: root.lastPathComponent),
                .product(name: "StreamingMultipartS3", package: root.lastPathComponent),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            ]
        ),
        .testTarget(
            name: "UploadServerTests",
            dependencies: [
                "UploadServer",  // so that `swift test` builds the server binary the tests start
                .product(name: "StreamingMultipart", package: root.lastPathComponent),
                .product(name: "StreamingMultipartCrypto", package: root.lastPathComponent),
                .product(name: "StreamingMultipartNIO", package: root.lastPathComponent),
                .product(name: "StreamingMultipartURLSession", package: root.lastPathComponent),
                .product(name: "StreamingMultipartAsyncHTTPClient", package: root.lastPathComponent),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
