import AsyncHTTPClient
import Foundation
import MultipartTestSupport
import NIOCore
import NIOHTTP1
import StreamingMultipart
import StreamingMultipartNIO
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The README's examples compile exactly as printed, imports included: each ```swift block of README.md is, whole,
/// one file of `Tests/DocumentationTests/Readme/` (in order), compiled into this target; the tests here, and those
/// of the DocC blocks that use them, run them. The block of a server framework (it imports Hummingbird, which this
/// package builds only with its trait on) is, whole, the Hummingbird example's small app, which that example
/// compiles and tests. The blocks that are `Package.swift` files are loaded by SwiftPM, and each product and trait
/// they take from this package must be one it has.
@Suite(.serialized) struct ReadmeTests {
    static let frameworkBlocks = ["Examples/UploadServer/Sources/SmallUploadServer/main.swift"]

    static func blocks() throws -> [String] {
        let readme = try String(contentsOf: Repository.root.appendingPathComponent("README.md"), encoding: .utf8)
        return readme.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
    }

    static func isManifest(_ block: String) -> Bool { block.hasPrefix("// swift-tools-version") }

    @Test func everySwiftBlockOfTheReadmeIsAFileCompiledAsItIs() throws {
        let all = try Self.blocks().filter { !Self.isManifest($0) }
        func importsFramework(_ block: String) -> Bool {
            block.contains("\nimport Hummingbird\n") || block.contains("\nimport Vapor\n")
        }
        let apps = try Self.frameworkBlocks.map {
            try String(contentsOf: Repository.root.appendingPathComponent($0), encoding: .utf8)
        }
        #expect(all.filter(importsFramework) == apps, "the README's server block is not the example's small app")
        let blocks = all.filter { !importsFramework($0) }
        let folder = Repository.root.appendingPathComponent("Tests/DocumentationTests/Readme")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
            .sorted()
        #expect(blocks.count == files.count, "README blocks: \(blocks.count), files: \(files)")
        for (block, file) in zip(blocks, files) {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            #expect(block == text, "README block differs from Readme/\(file):\n\(block)")
            #expect(block.hasPrefix("import "), "README block \(file) does not begin with its imports")
        }
    }

    /// What `swift package dump-package` says of the manifest in `folder`, with a build folder of its own in
    /// `scratch` (the package's own is locked by the `swift test` that runs this).
    static func dumpPackage(_ folder: URL, scratch: URL) throws -> [String: Any] {
        let swift = try #require(executableOnPath("swift"))
        let result = try runProgram(
            swift, ["package", "--package-path", folder.path, "--scratch-path", scratch.path, "dump-package"])
        try #require(result.status == 0, "dump-package failed in \(folder.path): \(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdoutText.utf8)) as? [String: Any])
    }

    /// The three `Package.swift` files (a client, a Hummingbird server, a Vapor server) load in SwiftPM, each beside a
    /// checkout named `StreamingMultipart` as the README says, and take only products and traits this package has.
    @Test(.enabled(if: executableOnPath("swift") != nil, "needs the swift driver on PATH to load the manifests"))
    func everyPackageManifestOfTheReadmeLoadsAndNamesRealProducts() throws {
        let manifests = try Self.blocks().filter(Self.isManifest)
        #expect(manifests.count == 3, "a client's, a Hummingbird server's and a Vapor server's")
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let root = try Self.dumpPackage(Repository.root, scratch: folder.url.appendingPathComponent("scratch"))
        let products = Set(((root["products"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String })
        let traits = Set(((root["traits"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String })
        #expect(products.contains("StreamingMultipartHummingbird") && traits.contains("Hummingbird"))
        // The README's layout: the app beside a checkout named StreamingMultipart.
        try FileManager.default.createSymbolicLink(
            at: folder.url.appendingPathComponent("StreamingMultipart"), withDestinationURL: Repository.root)
        for (index, manifest) in manifests.enumerated() {
            let app = folder.url.appendingPathComponent("app\(index)")
            try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
            try manifest.write(to: app.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
            let dump = try Self.dumpPackage(app, scratch: app.appendingPathComponent(".build"))
            let ours = ((dump["dependencies"] as? [[String: Any]]) ?? []).compactMap {
                ($0["fileSystem"] as? [[String: Any]])?.first
            }
            try #require(ours.count == 1, "manifest \(index + 1) depends on the checkout by path")
            let asked = Set(((ours[0]["traits"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String })
            #expect(asked.isSubset(of: traits), "manifest \(index + 1) turns on \(asked.subtracting(traits))")
            let taken = ((dump["targets"] as? [[String: Any]]) ?? []).flatMap {
                ($0["dependencies"] as? [[String: Any]]) ?? []
            }.compactMap { $0["product"] as? [Any] }.filter { $0.count > 1 && $0[1] as? String == "StreamingMultipart" }
                .compactMap { $0[0] as? String }
            #expect(!taken.isEmpty && Set(taken).isSubset(of: products), "manifest \(index + 1) takes \(taken)")
        }
    }

    func exampleBody() throws -> MultipartBody {
        let notes = Repository.input("notes.txt")
        let size = try Data(contentsOf: notes).count
        return try makeUploadBody(photo: Repository.input("blob.bin"), log: notes, logSize: size)
    }

    @Test func buildExampleMakesTheFieldsItSays() throws {
        let text = String(decoding: try exampleBody().bytes(), as: UTF8.self)
        for name in ["caption", "photo", "log", "album[id]", "album[tags][]"] {
            #expect(text.contains("name=\"\(name)\""), "\(name)")
        }
    }

    @Test(.enabled(if: Peers.pythonMultipart != nil, "needs python3 with python-multipart (.ci/run installs it)"))
    func urlSessionExamplesUploadToARealServer() async throws {
        let server = try PeerUploadServer(python: try #require(Peers.pythonMultipart))
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let body = try exampleBody()
        for (data, response) in [
            try await upload(body, to: server.url),
            try await uploadStreaming(body, to: server.url),
            try await uploadFromFile(body, to: server.url, spool: folder.url.appendingPathComponent("spool.body")),
        ] {
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            let reply = try JSONDecoder().decode(PeerReply.self, from: data)
            #expect(
                reply.parts?.map(\.name) == ["caption", "photo", "log", "album[id]", "album[tags][]", "album[tags][]"])
        }
        #expect(try folder.contents().isEmpty)  // the spool file is removed after the upload
    }

    @Test(.enabled(if: Peers.pythonMultipart != nil, "needs python3 with python-multipart (.ci/run installs it)"))
    func asyncHTTPClientExampleUploadsToARealServer() async throws {
        let server = try PeerUploadServer(python: try #require(Peers.pythonMultipart))
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let status: UInt
        let data: ByteBuffer
        do {
            let response = try await upload(try exampleBody(), to: server.url.absoluteString, with: client)
            (status, data) = (response.status.code, try await response.body.collect(upTo: 1 << 20))
            try await client.shutdown()
        } catch {
            try await client.shutdown()
            throw error
        }
        #expect(status == 200)
        let reply = try JSONDecoder().decode(PeerReply.self, from: Data(String(buffer: data).utf8))
        #expect(reply.parts?.map(\.name) == ["caption", "photo", "log", "album[id]", "album[tags][]", "album[tags][]"])
        #expect(reply.content_length != nil && reply.transfer_encoding == nil)
    }

    @Test func delegateHandsOutAFreshStream() throws {
        let body = try exampleBody()
        let delegate = UploadDelegate(body: body)
        let task = URLSession.shared.dataTask(with: URL(string: "http://127.0.0.1:1/")!)
        let stream = Locked<InputStream?>(nil)
        delegate.urlSession(URLSession.shared, task: task, needNewBodyStream: { stream.set($0) })
        #expect(try readStream(try #require(stream.get()), maxLength: 4096) == (try body.bytes()))
    }

    @Test func throttledStreamReportsProgress() throws {
        var body = MultipartBody()
        try body.append(.text("small", name: "s"))
        #expect(try readStream(throttledStream(for: body), maxLength: 64 * 1024) == (try body.bytes()))
    }

    @Test func asyncAndReaderExamplesProduceTheBody() async throws {
        let body = try exampleBody()
        let collected = Locked([UInt8]())
        try await send(body) { chunk in
            var all = collected.get()
            all += chunk
            collected.set(all)
        }
        #expect(collected.get() == (try body.bytes()))
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.url.appendingPathComponent("copy.body").path
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        let count = try copyBody(body, to: handle)
        try handle.close()
        #expect(count == body.contentLength)
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) == (try body.bytes()))
    }

    @Test func parserExamplesFindTheParts() async throws {
        let body = try exampleBody()
        let bytes = try body.bytes()
        let names = ["caption", "photo", "log", "album[id]", "album[tags][]", "album[tags][]"]
        #expect(try fieldNames(in: bytes, contentType: body.contentType) == names)

        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let chunks = AsyncStream { continuation in
            for start in stride(from: 0, to: bytes.count, by: 1000) {
                continuation.yield(Array(bytes[start..<min(start + 1000, bytes.count)]))
            }
            continuation.finish()
        }
        let fields = try await receive(chunks, contentType: body.contentType, saveFilesIn: folder.url)
        #expect(fields == ["caption": "Sunset over the bay", "album[id]": "42", "album[tags][]": "sunset"])
        let saved = try folder.contents().map { try Data(contentsOf: folder.url.appendingPathComponent($0)) }
        #expect(
            Set(saved) == [
                try Data(contentsOf: Repository.input("blob.bin")), try Data(contentsOf: Repository.input("notes.txt")),
            ])

        let parser = try uploadParser(contentType: body.contentType)
        #expect(parser.limits.maxParts == 20 && parser.mode == .lenient)
    }

    @Test func spoolExampleKeepsThePhotosAndRemovesTheRest() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let spool = folder.url.appendingPathComponent("spool")
        let photos = folder.url.appendingPathComponent("photos")
        for url in [spool, photos] {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }
        let first = [UInt8](repeating: 1, count: 70_000)
        let second = [UInt8](repeating: 2, count: 5_000)
        var body = MultipartBody()
        try body.append(.text("Sunset", name: "caption"))
        try body.append(.data(Data(first), name: "photos", filename: "a.jpg"))
        try body.append(.data(Data(second), name: "photos", filename: "b.jpg"))
        try body.append(.data(Data([3, 3, 3]), name: "notes", filename: "notes.txt"))
        var reader = body.makeReader(compression: .gzip)
        let chunks = chunkStream(try reader.readAll(), size: 4096)
        let caption = try await receiveUpload(
            chunks, contentType: body.contentType, contentEncoding: "gzip", spool: spool.path, photos: photos.path)
        #expect(caption == "Sunset")
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool.path) == [])
        let kept = try FileManager.default.contentsOfDirectory(atPath: photos.path).sorted()
        #expect(kept == [sha256Hex(first), sha256Hex(second)].sorted())
    }

    @Test func fileFilterExampleRefusesSVGAndNamesAMissingField() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let heads: [String: [UInt8]] = [
            "png": [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "svg": Array("<svg>".utf8),
        ]
        func answer(_ fields: [String], images: [(String, String)]) async throws -> (Int, String) {
            var body = MultipartBody()
            for name in fields { try body.append(.text("Holiday", name: name)) }
            for (filename, type) in images {
                // The image's bytes start as its kind's do (the filter's sniffed type), whatever its label says.
                let head = heads[String(filename.split(separator: ".")[1])]!
                let bytes = head + [UInt8](repeating: 9, count: 50_000 - head.count)
                try body.append(.data(Data(bytes), name: "images", filename: filename, contentType: type))
            }
            let (status, json) = await receiveGallery(
                chunkStream(try body.bytes(), size: 4096), contentType: body.contentType, spool: folder.url.path)
            #expect(try folder.contents() == [])
            return (status, String(decoding: json, as: UTF8.self))
        }
        let stored = try await answer(["title"], images: [("a.png", "image/png"), ("b.png", "image/png")])
        #expect(stored == (201, #"{"images":2}"#))
        let svg = try await answer(["title"], images: [("a.png", "image/png"), ("c.svg", "image/svg+xml")])
        #expect(svg.0 == 415 && svg.1.contains(#""code":"fileRefused""#) && svg.1.contains("WebP images"))
        let labelled = try await answer(["title"], images: [("c.svg", "image/png")])
        #expect(labelled.0 == 415, "an SVG labelled image/png is refused by its bytes")
        let untitled = try await answer([], images: [("a.png", "image/png")])
        #expect(untitled.0 == 422 && untitled.1.contains(#""field":"title""#))
    }

    @Test func typedFormExampleComesBackFromTheSpool() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let avatar = [UInt8](repeating: 7, count: 20_000)
        let profile = Profile(
            name: "Ann", born: Date(timeIntervalSince1970: 86_400 * 9_000), languages: ["Swift", "Go"],
            address: .init(city: "Lyon", zip: "69001"),
            avatar: MultipartFile(Data(avatar), filename: "ann.png", contentType: "image/png"))
        let body = try profileBody(profile)
        let form = try await MultipartSpooler(directory: folder.url.path)
            .spool(chunkStream(try body.bytes(), size: 4096), contentType: body.contentType)
        defer { form.removeFiles() }
        #expect(
            form.fields.map(\.name) == ["name", "born", "languages[]", "languages[]", "address[city]", "address[zip]"])
        let back = try readProfile(form)
        #expect(back.name == "Ann" && back.born == profile.born && back.languages == ["Swift", "Go"])
        #expect(back.address.city == "Lyon" && back.address.zip == "69001")
        #expect(back.avatar.filename == "ann.png" && back.avatar.contentType == "image/png")
        guard case .file(let url) = back.avatar.source else {
            Issue.record("the avatar arrives as a file on disk")
            return
        }
        #expect(try Array(Data(contentsOf: url)) == avatar)
    }

    @Test func byteBufferExampleFindsTheParts() async throws {
        let body = try exampleBody()
        let buffers = body.byteBuffers(size: 1000)
        let names = try await partNames(of: buffers, contentType: body.contentType)
        #expect(names == ["caption", "photo", "log", "album[id]", "album[tags][]", "album[tags][]"])
        let parts = try await partBuffers(of: buffers, contentType: body.contentType)
        let photo = try #require(parts["photo"])
        #expect(
            photo.flatMap { Array($0.readableBytesView) } == Array(try Data(contentsOf: Repository.input("blob.bin"))))
        #expect(parts["caption"].map { $0.map { String(buffer: $0) }.joined() } == "Sunset over the bay")
    }
}
