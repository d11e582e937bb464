// swift-tools-version:6.1
// What both examples' tests share: running programs and peers under a time limit, files and bytes for a form, and
// the checks every small app and every server must pass (Scripts/). Not a product of StreamingMultipart: a package
// the examples' test targets depend on by path.
import Foundation
import PackageDescription

/// SwiftPM names a path dependency after its folder, which is wherever the repository was cloned.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

let package = Package(
    name: "ExampleTestSupport",
    platforms: [.macOS(.v14)],
    products: [.library(name: "ExampleTestSupport", targets: ["ExampleTestSupport"])],
    dependencies: [.package(path: root.path)],
    targets: [
        .target(
            name: "ExampleTestSupport",
            dependencies: [.product(name: "StreamingMultipartCrypto", package: root.lastPathComponent)]
        )
    ],
    swiftLanguageModes: [.v6]
)
