// swift-tools-version:6.1
// StreamingMultipart: multipart/form-data that never needs a whole body in memory.
import PackageDescription

/// Upcoming features every target opts into (ARCHITECTURE.md, "Package"); Fuzz/run.sh reads them from here.
let upcoming: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "StreamingMultipart",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "StreamingMultipart", targets: ["StreamingMultipart"]),
        .library(name: "StreamingMultipartUploadClient", targets: ["StreamingMultipartUploadClient"]),
        .library(name: "StreamingMultipartURLSession", targets: ["StreamingMultipartURLSession"]),
        .library(name: "StreamingMultipartCrypto", targets: ["StreamingMultipartCrypto"]),
        .library(name: "StreamingMultipartNIO", targets: ["StreamingMultipartNIO"]),
        .library(name: "StreamingMultipartServer", targets: ["StreamingMultipartServer"]),
        .library(name: "StreamingMultipartAsyncHTTPClient", targets: ["StreamingMultipartAsyncHTTPClient"]),
        .library(name: "StreamingMultipartS3", targets: ["StreamingMultipartS3"]),
        // Built only with their trait on: `.package(url: …, traits: ["Hummingbird"])`.
        .library(name: "StreamingMultipartHummingbird", targets: ["StreamingMultipartHummingbird"]),
        .library(name: "StreamingMultipartVapor", targets: ["StreamingMultipartVapor"]),
        .executable(name: "multipart", targets: ["MultipartCLI"]),
    ],
    traits: [
        // Each server framework is behind a trait of its own, off by default: an app that does not turn one on
        // neither resolves nor builds that framework (SwiftPM prunes dependencies only a disabled trait uses).
        .trait(name: "Hummingbird", description: "StreamingMultipartHummingbird: upload routes on Hummingbird 2"),
        .trait(name: "Vapor", description: "StreamingMultipartVapor: upload routes on Vapor 4"),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),  // what cleanup cannot throw
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),  // counters, timers, gauges
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),  // spans
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.30.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.29.0"),  // the CLI's --cacert, --insecure
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),  // tests only
        .package(url: "https://github.com/vapor/multipart-kit", exact: "4.7.1"),  // tests only: the interop tests
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),  // trait Hummingbird
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.34.1"),  // trait Hummingbird
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),  // trait Hummingbird
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),  // trait Hummingbird
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.45.0"),  // AsyncHTTPClient's; HTTP/2
        .package(url: "https://github.com/vapor/vapor", from: "4.122.3"),  // trait Vapor
    ],
    targets: [
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // CRC-32C on the processor's CRC instructions, which Swift cannot emit: the package's one C file.
        .target(name: "CCRC32C"),
        .target(
            name: "StreamingMultipart",
            dependencies: [
                "CZlib", "CCRC32C", .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: upcoming
        ),
        .target(
            // The upload client's policy that the one-call uploads and the S3 store share: the plan (redirects,
            // retries), MultipartRetry, and the fields of resumable uploads. Foundation only; no multipart type.
            name: "StreamingMultipartUploadClient",
            swiftSettings: upcoming
        ),
        .target(
            name: "StreamingMultipartURLSession",  // URLRequest conveniences: the one target with FoundationNetworking
            dependencies: ["StreamingMultipart", "StreamingMultipartUploadClient"],
            swiftSettings: upcoming
        ),
        .target(
            name: "StreamingMultipartCrypto",  // SHA-256 for the spooler: the one library target with swift-crypto
            dependencies: ["StreamingMultipart", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: upcoming
        ),
        .target(
            // ByteBuffer glue for servers and AsyncHTTPClient: chunks in and out, NIOCore only.
            name: "StreamingMultipartNIO",
            dependencies: ["StreamingMultipart", .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: upcoming
        ),
        .target(
            // What any upload server needs below its framework: connection guards, admission, 100-continue, the
            // resumable server, the heap setting; the Hummingbird and Vapor products are thin on it. swift-nio only.
            name: "StreamingMultipartServer",
            dependencies: [
                "StreamingMultipart", "StreamingMultipartUploadClient", "StreamingMultipartNIO",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: upcoming
        ),
        .target(
            // One-call uploads over AsyncHTTPClient: the one library target with it (and so with BoringSSL).
            name: "StreamingMultipartAsyncHTTPClient",
            dependencies: [
                "StreamingMultipart", "StreamingMultipartUploadClient", "StreamingMultipartNIO",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),  // interim answers on HTTP/2 streams
            ],
            swiftSettings: upcoming
        ),
        .target(
            // Spooling into S3-compatible object storage over AsyncHTTPClient, signed (Signature Version 4) with
            // swift-crypto.
            name: "StreamingMultipartS3",
            dependencies: [
                "StreamingMultipart", "StreamingMultipartUploadClient",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: upcoming
        ),
        .target(
            // Upload routes on Hummingbird: the guarded HTTP/1 server, typed forms from requests, errors as answers.
            // Empty unless the trait is on.
            name: "StreamingMultipartHummingbird",
            dependencies: [
                "StreamingMultipart", "StreamingMultipartUploadClient", "StreamingMultipartNIO",
                "StreamingMultipartServer",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
                .product(
                    name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["Hummingbird"])),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras", condition: .when(traits: ["Hummingbird"])),
                .product(
                    name: "ServiceLifecycle", package: "swift-service-lifecycle",
                    condition: .when(traits: ["Hummingbird"])),
                .product(
                    name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras", condition: .when(traits: ["Hummingbird"])),
                // .guardedHTTP2: HTTP/2 (and its streams as HTTP/1 parts), TLS with ALPN.
                .product(name: "NIOHTTP2", package: "swift-nio-http2", condition: .when(traits: ["Hummingbird"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Hummingbird"])),
                .product(name: "NIOTLS", package: "swift-nio", condition: .when(traits: ["Hummingbird"])),
            ],
            swiftSettings: upcoming
        ),
        .target(
            // Upload routes on Vapor: typed forms from requests, errors as Vapor's answers. Empty unless the trait is on.
            name: "StreamingMultipartVapor",
            dependencies: [
                "StreamingMultipart", "StreamingMultipartNIO", "StreamingMultipartServer",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Vapor"])),
            ],
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "MultipartCLI",
            dependencies: [
                "StreamingMultipart", "StreamingMultipartAsyncHTTPClient",
                "StreamingMultipartUploadClient",  // the interop versions `send --resume-version` takes
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),  // SHA-256 for `parse --json`
                .product(name: "AsyncHTTPClient", package: "async-http-client"),  // `send`
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: upcoming
        ),
        // Tests: one target per product, each depending on its product and the shared helpers alone.
        .target(
            name: "MultipartTestSupport",  // helpers the test targets share; swift-crypto only to hash what peers read
            dependencies: ["StreamingMultipart", .product(name: "Crypto", package: "swift-crypto")],
            path: "Tests/MultipartTestSupport",
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "StreamingMultipartTests",
            dependencies: [
                "StreamingMultipart", "MultipartTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "MultipartKitInteropTests",  // forms written by Vapor's MultipartKit read here, and the reverse
            dependencies: [
                "StreamingMultipart", "MultipartTestSupport",
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "StreamingMultipartUploadClientTests",
            dependencies: ["StreamingMultipartUploadClient"],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "StreamingMultipartURLSessionTests",
            dependencies: ["StreamingMultipart", "StreamingMultipartURLSession", "MultipartTestSupport"],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "StreamingMultipartNIOTests",
            dependencies: [
                "StreamingMultipart", "StreamingMultipartNIO", "MultipartTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "StreamingMultipartServerTests",
            dependencies: [
                "StreamingMultipart", "StreamingMultipartNIO", "StreamingMultipartServer", "MultipartTestSupport",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "StreamingMultipartCryptoTests",
            dependencies: ["StreamingMultipart", "StreamingMultipartCrypto", "MultipartTestSupport"],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "StreamingMultipartAsyncHTTPClientTests",
            dependencies: [
                "StreamingMultipart", "StreamingMultipartAsyncHTTPClient", "MultipartTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: upcoming
        ),
        .testTarget(
            // One redirect table through both one-call uploads, URLSession's and AsyncHTTPClient's.
            name: "UploadRedirectTests",
            dependencies: [
                "StreamingMultipart", "StreamingMultipartURLSession", "StreamingMultipartAsyncHTTPClient",
                "MultipartTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: upcoming
        ),
        .testTarget(
            // The signer against AWS's Signature Version 4 suite and botocore; the store against moto's S3.
            name: "StreamingMultipartS3Tests",
            dependencies: [
                "StreamingMultipart", "StreamingMultipartS3", "StreamingMultipartCrypto", "MultipartTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "MultipartCLITests",
            dependencies: [
                "MultipartCLI",  // so that `swift test` builds the `multipart` binary these tests run
                "StreamingMultipart", "MultipartTestSupport",
            ],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "DocumentationTests",  // the README's and the DocC catalogs' examples, compiled and run
            dependencies: [
                "StreamingMultipart", "StreamingMultipartURLSession", "StreamingMultipartNIO",
                "StreamingMultipartServer", "StreamingMultipartUploadClient",
                "StreamingMultipartCrypto", "StreamingMultipartAsyncHTTPClient", "StreamingMultipartS3",
                "MultipartTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: upcoming
        ),
    ],
    swiftLanguageModes: [.v6]
)
