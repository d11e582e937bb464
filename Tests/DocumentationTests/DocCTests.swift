import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// The DocC catalogs' examples compile exactly as printed, imports included: each ```swift block of an article
/// `Sources/<Product>/<Product>.docc/<Article>.md` is, whole, the file `DocC/<Product>-<Article>-<n>.swift` of this
/// target (n counts the article's blocks from 1). A block that imports Vapor is instead the file
/// `Examples/VaporUpload/Sources/VaporUpload/Documented/<Product>-<Article>-<n>.swift`, compiled by that example's
/// build (this package does not depend on Vapor). The tests below also run the ones that need no server.
@Suite struct DocCTests {
    @Test func everySwiftBlockOfTheCatalogsIsAFileCompiledAsItIs() throws {
        let sources = Repository.root.appendingPathComponent("Sources")
        let folder = Repository.root.appendingPathComponent("Tests/DocumentationTests/DocC")
        var expected: Set<String> = []
        for product in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() {
            let catalog = sources.appendingPathComponent("\(product)/\(product).docc")
            guard let articles = try? FileManager.default.contentsOfDirectory(atPath: catalog.path) else { continue }
            for article in articles.sorted() where article.hasSuffix(".md") {
                let text = try String(contentsOf: catalog.appendingPathComponent(article), encoding: .utf8)
                let blocks = text.components(separatedBy: "```swift\n").dropFirst().map {
                    $0.components(separatedBy: "```")[0]
                }
                for (index, block) in blocks.enumerated() {
                    let name = "\(product)-\(article.dropLast(3))-\(index + 1).swift"
                    let vapor = block.contains("\nimport Vapor\n") || block.hasPrefix("import Vapor\n")
                    let file =
                        vapor
                        ? Repository.root.appendingPathComponent(
                            "Examples/VaporUpload/Sources/VaporUpload/Documented/\(name)")
                        : folder.appendingPathComponent(name)
                    if !vapor { expected.insert(name) }
                    let compiled = try? String(contentsOf: file, encoding: .utf8)
                    #expect(
                        compiled == block, "\(product).docc/\(article) block \(index + 1) differs from \(file.path)")
                    #expect(block.hasPrefix("import "), "\(product).docc/\(article) block \(index + 1) has no imports")
                }
            }
        }
        #expect(!expected.isEmpty)
        let files = Set(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") })
        #expect(files == expected, "DocC/ files that no article prints: \(files.subtracting(expected).sorted())")
    }

    /// A sink that keeps what it is given, for the parsing example.
    struct Collected: PartSink {
        let parts: Locked<[String]>
        var bytes: [UInt8] = []
        mutating func write(_ bytes: ArraySlice<UInt8>) throws { self.bytes += bytes }
        mutating func close() throws {
            var all = parts.get()
            all.append(String(decoding: bytes, as: UTF8.self))
            parts.set(all)
        }
    }

    @Test func theParsingExamplesReadABody() async throws {
        var body = MultipartBody(boundary: try MultipartBoundary("docc-boundary"))
        try body.append(.text("Sunset", name: "caption"))
        try body.append(.data(Data("jpeg".utf8), name: "photo", filename: "a.jpg"))
        let bytes = try body.bytes()
        let contentType = "multipart/form-data; boundary=docc-boundary"
        let chunks = AsyncThrowingStream<[UInt8], any Error> { continuation in
            for start in stride(from: 0, to: bytes.count, by: 7) {
                continuation.yield(Array(bytes[start..<min(start + 7, bytes.count)]))
            }
            continuation.finish()
        }
        let parts = Locked<[String]>([])
        try await parse(chunks, contentType: contentType) { _, _ in Collected(parts: parts) }
        #expect(parts.get() == ["Sunset", "jpeg"])

        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try FileHandle(forWritingTo: try folder.file("photo", contents: []))
        let fields = try await readForm(
            AsyncThrowingStream<[UInt8], any Error> {
                $0.yield(bytes)
                $0.finish()
            }, contentType: contentType, file: file)
        try file.close()
        #expect(fields == ["caption": "Sunset"])
        #expect(try Data(contentsOf: folder.url.appendingPathComponent("photo")) == Data("jpeg".utf8))
    }

    @Test func theLimitsExampleRefusesTheTwentyFirstPart() throws {
        var body = MultipartBody(boundary: try MultipartBoundary("limits"))
        for index in 0..<21 { try body.append(.text("\(index)", name: "f\(index)")) }
        var parser = try makeUploadParser(contentType: "multipart/form-data; boundary=limits")
        let error = #expect(throws: MultipartError.self) {
            try parser.append(try body.bytes())
            while try parser.next() != nil {}
        }
        #expect(error?.code == .limitExceeded)
    }

    @Test func theBuildingExampleMakesItsFields() throws {
        let notes = Repository.input("notes.txt")
        let size = try Data(contentsOf: notes).count
        let body = try makeAlbumBody(
            thumbnail: Data([1, 2, 3]), photoURL: Repository.input("blob.bin"), logURL: notes, logSize: size)
        let text = String(decoding: try body.bytes(), as: UTF8.self)
        for name in ["caption", "thumb", "photo", "log", "album[id]", "album[tags][]"] {
            #expect(text.contains("name=\"\(name)\""), "\(name)")
        }
    }
}
