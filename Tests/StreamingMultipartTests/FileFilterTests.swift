import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// The spooler's file filter: asked for each file part before any of its bytes is stored, it stores, skips or
/// refuses; a refused form leaves nothing in the folder or the store, a skipped file leaves the rest of the form.
@Suite struct FileFilterTests {
    static let png: [UInt8] = {
        var random = SeededGenerator(seed: 31)
        return random.bytes(300_000)
    }()
    static let svg = Array("<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>".utf8)

    /// A caption, a PNG, an SVG (after the PNG: the PNG is stored when the SVG comes) and a text file.
    static func body() throws -> MultipartBody {
        var body = MultipartBody()
        try body.append(.text("Sunset", name: "caption"))
        try body.append(.data(Data(png), name: "photos[]", filename: "sun.png", contentType: "image/png"))
        try body.append(.data(Data(svg), name: "photos[]", filename: "logo.svg", contentType: "image/svg+xml"))
        try body.append(.data(Data("notes".utf8), name: "notes", filename: "notes.txt", contentType: "text/plain"))
        return body
    }

    /// Records what the filter was asked, and refuses or skips SVG images.
    final class SVGFilter: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [MultipartStoreFile] = []
        let decision: MultipartFileDecision

        init(_ decision: MultipartFileDecision) { self.decision = decision }

        var asked: [MultipartStoreFile] { lock.withLock { seen } }

        func decide(_ file: MultipartStoreFile) -> MultipartFileDecision {
            lock.withLock { seen.append(file) }
            return file.mediaType == "image/svg+xml" ? decision : .store
        }
    }

    static let refusal = MultipartFileDecision.refuse(status: 415, message: "SVG images are not accepted")

    @Test(arguments: [1, 997, 65536])
    func aRefusedFileLeavesNothingInTheFolder(chunk: Int) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let filter = SVGFilter(Self.refusal)
        var spooler = MultipartSpooler(directory: folder.url, limits: .untimed)
        spooler.fileFilter = filter.decide
        let body = try Self.body()
        let error = await #expect(throws: MultipartError.self) {
            _ = try await spooler.spool(chunkStream(try body.bytes(), size: chunk), contentType: body.contentType)
        }
        #expect(error?.code == .fileRefused && error?.partIndex == 2)
        #expect(error?.httpStatus == 415 && error?.clientMessage == "SVG images are not accepted")
        #expect(try folder.contents() == [])
        #expect(filter.asked.map(\.filename) == ["sun.png", "logo.svg"])
        #expect(
            filter.asked.last
                == MultipartStoreFile(
                    name: "photos[]", filename: "logo.svg", contentType: "image/svg+xml", partIndex: 2,
                    firstBytes: Self.svg))
    }

    /// The filter sees each file's first bytes and the type they show, the same however the body's chunks split
    /// them (one byte at a time included), and the file is stored whole, those bytes first.
    @Test(arguments: [1, 7, 1000, 65536])
    func theFilterSeesTheFirstBytesHoweverTheChunksSplitThem(chunk: Int) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let filter = SVGFilter(.store)
        var spooler = MultipartSpooler(directory: folder.url, limits: .untimed)
        spooler.fileFilter = filter.decide
        let body = try Self.body()
        let form = try await spooler.spool(chunkStream(try body.bytes(), size: chunk), contentType: body.contentType)
        defer { form.removeFiles() }
        #expect(filter.asked.map(\.firstBytes) == [Array(Self.png.prefix(1445)), Self.svg, Array("notes".utf8)])
        #expect(filter.asked.map(\.sniffedMediaType) == ["application/octet-stream", "image/svg+xml", "text/plain"])
        #expect(try form.files.map { try $0.contents() } == [Self.png, Self.svg, Array("notes".utf8)])
    }

    /// `fileHeadBytes` bounds the bytes held before the filter decides: none at 0, at most 4 KiB however large.
    @Test(arguments: [(0, 0), (16, 16), (4096, 4096), (1 << 20, 4096)])
    func theFilterSeesAsManyFirstBytesAsTheSpoolerReads(asked: Int, seen: Int) async throws {
        let store = RecordingStore()
        let filter = SVGFilter(.store)
        var spooler = MultipartSpooler(store: store, limits: .untimed)
        spooler.fileHeadBytes = asked
        spooler.fileFilter = filter.decide
        let body = try Self.body()
        let form = try await spooler.spool(chunkStream(try body.bytes(), size: 997), contentType: body.contentType)
        #expect(filter.asked.first?.firstBytes == Array(Self.png.prefix(seen)))
        #expect(store.begun.first?.firstBytes == Array(Self.png.prefix(seen)), "the store begins the file with them")
        let stored = try #require(form.files.first?.storedObject?.key)
        #expect(store.objects[stored] == Self.png)
    }

    /// A filter that takes images by what the bytes show refuses markup however it is named and labelled, and
    /// takes an image that carries markup after its signature (a browser sniffs it as the image it starts as).
    @Test(
        arguments: [
            ("markup.svg", "image/svg+xml", false), ("polyglot-svg-named.png", "image/png", false),
            ("polyglot-html-named.png", "image/png", false), ("markup-prolog.svg", "image/png", false),
            ("markup-script.html", "image/jpeg", false), ("markup.html", nil, false), ("image.png", "image/png", true),
            ("image.png", "application/octet-stream", true), ("polyglot-png-html-tail.png", "image/png", true),
        ] as [(String, String?, Bool)])
    func anImageFilterBySniffedTypeRefusesMarkupHoweverItIsLabelled(
        fixture: String, label: String?, stored: Bool
    ) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var spooler = MultipartSpooler(directory: folder.url, limits: .untimed)
        spooler.fileFilter = { file in
            switch file.sniffedMediaType {
            case "image/png", "image/jpeg", "image/gif", "image/webp": .store
            default: .refuse(status: 415, message: "only PNG, JPEG, GIF and WebP images are taken")
            }
        }
        var body = MultipartBody()
        let bytes = try MediaTypeSniffingTests.fixture(fixture)
        try body.append(.data(Data(bytes), name: "photo", filename: fixture, contentType: label))
        let spool = { try await spooler.spool(chunkStream(try body.bytes(), size: 64), contentType: body.contentType) }
        if stored {
            let form = try await spool()
            #expect(try form.files.map { try $0.contents() } == [bytes])
            form.removeFiles()
        } else {
            let error = await #expect(throws: MultipartError.self) { _ = try await spool() }
            #expect(error?.code == .fileRefused && error?.httpStatus == 415)
        }
        #expect(try folder.contents() == [])
    }

    @Test func aRefusedFileLeavesNothingInTheStore() async throws {
        let store = RecordingStore()
        var spooler = MultipartSpooler(store: store, limits: .untimed)
        spooler.fileFilter = SVGFilter(.refuse(status: 422, message: "no SVG")).decide
        let body = try Self.body()
        let error = await #expect(throws: MultipartError.self) {
            _ = try await spooler.spool(chunkStream(try body.bytes(), size: 4096), contentType: body.contentType)
        }
        #expect(error?.code == .fileRefused && error?.httpStatus == 422)
        #expect(store.isEmpty)
        #expect(store.removed.count == 1, "the PNG, stored before the SVG came, was removed")
    }

    @Test(arguments: [1, 997, 65536])
    func aSkippedFileIsDrainedAndTheRestIsStored(chunk: Int) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let filter = SVGFilter(.skip)
        var spooler = MultipartSpooler(directory: folder.url, limits: .untimed, digest: FNV1aDigest.self)
        spooler.fileFilter = filter.decide
        let body = try Self.body()
        try await spooler.withSpooledForm(
            chunkStream(try body.bytes(), size: chunk), contentType: body.contentType
        ) { form throws in
            #expect(form.value(of: "caption") == "Sunset")
            #expect(form.files.map(\.filename) == ["sun.png", "notes.txt"])
            #expect(form.files.map(\.partIndex) == [1, 3])
            #expect(form.files[0].digest?.hex == FNV1aDigest.hex(Self.png))
            #expect(try form.files[1].contents() == Array("notes".utf8))
            #expect(try folder.contents().count == 2, "the PNG and the notes are on disk, the SVG never was")
        }
        #expect(filter.asked.map(\.filename) == ["sun.png", "logo.svg", "notes.txt"])
        #expect(try folder.contents() == [])
    }

    @Test func skippedFilesCountAgainstMaxFiles() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var limits = MultipartSpooler.Limits.untimed
        limits.maxFiles = 2
        var spooler = MultipartSpooler(directory: folder.url, limits: limits)
        spooler.fileFilter = SVGFilter(.skip).decide
        let body = try Self.body()
        let error = await #expect(throws: MultipartError.self) {
            _ = try await spooler.spool(chunkStream(try body.bytes(), size: 4096), contentType: body.contentType)
        }
        #expect(error?.code == .limitExceeded && error?.message.contains("maxFiles") == true)
        #expect(try folder.contents() == [])
    }

    @Test func aSkippedFileStillCountsAgainstTheParsersLimits() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var limits = MultipartSpooler.Limits.untimed
        limits.parser.maxFileBytes = 1000
        var spooler = MultipartSpooler(directory: folder.url, limits: limits)
        spooler.fileFilter = { _ in .skip }
        let body = try Self.body()
        let error = await #expect(throws: MultipartError.self) {
            _ = try await spooler.spool(chunkStream(try body.bytes(), size: 4096), contentType: body.contentType)
        }
        #expect(error?.code == .limitExceeded && error?.partIndex == 1)
    }

    @Test func theFilterSeesTheFilesInsideAMultipartMixedPart() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let asked = SVGFilter(.store)
        var spooler = MultipartSpooler(directory: folder.url, limits: .untimed)
        spooler.fileFilter = { file in
            _ = asked.decide(file)
            return file.filename == "a.txt" ? .skip : .store
        }
        let body = MixedPartTests.curlBody(Array("hello a".utf8), Array("hello b".utf8))
        try await spooler.withSpooledForm(chunkStream(body, size: 5), contentType: MixedPartTests.contentType) {
            form in
            #expect(form.files.map(\.filename) == ["b.txt"])
            #expect(form.files.map(\.name) == ["f"])
            #expect(form.value(of: "g") == "text")
        }
        #expect(asked.asked.map(\.filename) == ["a.txt", "b.txt"])
        #expect(asked.asked.map(\.name) == ["f", "f"])
    }

    /// The documented filter (`file.mediaType == "image/svg+xml"`) refuses every way a client may write the type:
    /// any case, parameters, an empty parameter, whitespace, a parameter that does not parse.
    @Test(arguments: [
        "image/SVG+XML", "image/svg+xml; charset=utf-8", "image/svg+xml;", " image/svg+xml ", "IMAGE/Svg+Xml ;",
        "image/svg+xml; x=\"unterminated", "image/svg+xml\t;a=1;a=2",
    ])
    func theDocumentedFilterRefusesEveryWayOfWritingTheType(declared: String) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var spooler = MultipartSpooler(directory: folder.url, limits: .untimed)
        spooler.fileFilter = { file in
            file.mediaType == "image/svg+xml" ? .refuse(status: 415, message: "SVG images are not accepted") : .store
        }
        let body =
            Array(
                ("--b\r\nContent-Disposition: form-data; name=\"logo\"; filename=\"logo.svg\"\r\n"
                    + "Content-Type: \(declared)\r\n\r\n").utf8) + Self.svg + Array("\r\n--b--\r\n".utf8)
        let error = await #expect(throws: MultipartError.self) {
            _ = try await spooler.spool(chunkStream(body, size: 7), contentType: "multipart/form-data; boundary=b")
        }
        #expect(error?.code == .fileRefused, "\(declared) was not refused")
        #expect(try folder.contents() == [])
    }

    @Test func theMediaTypeIsTheEssenceOfTheDeclaredType() {
        let cases: [(String?, String?)] = [
            ("image/png", "image/png"), ("Image/PNG; q=1", "image/png"), ("\t text/plain ;", "text/plain"),
            ("image/svg+xml;charset=\"utf-8", "image/svg+xml"), (nil, nil), ("png", nil), ("/png", nil),
            ("image/", nil), ("image /png", nil), ("image/p ng", nil), ("image/png\u{E9}", nil), ("", nil),
        ]
        for (declared, expected) in cases {
            let file = MultipartStoreFile(name: "f", filename: "f", contentType: declared, partIndex: 0)
            #expect(file.mediaType == expected, "\(String(describing: declared))")
        }
    }
}

/// The buffers a file's first bytes come in, each lent as a `ByteBuffer` lends its storage: which of them the
/// spooler holds while the filter decides, and after.
@Suite struct FileHeadMemoryTests {
    /// A file whose first bytes come a byte to a buffer: while the filter decides, the spooler holds one of those
    /// buffers at most, with the bytes before it copied, not one a byte.
    @Test func theFilterDecidesHoldingOneLentBufferAtMost() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = [UInt8](repeating: UInt8(ascii: "a"), count: 10_000)
        var body = MultipartBody()
        try body.append(.data(Data(file), name: "f", filename: "f.txt", contentType: "text/plain"))
        let bytes = try body.bytes()
        let fileStart = try #require(bytes.indices.first { bytes[$0...].starts(with: file.prefix(64)) })
        // The head in one buffer, the file's first 3,000 bytes a byte to a buffer, the rest in one.
        var chunks = [Array(bytes[..<fileStart])] + (fileStart..<(fileStart + 3000)).map { [bytes[$0]] }
        chunks.append(Array(bytes[(fileStart + 3000)...]))
        let held = SharedCount()
        var spooler = MultipartSpooler(directory: folder.url, limits: .untimed)
        spooler.fileFilter = { _ in
            held.add(CountedLender.alive.value)
            return .store
        }
        let before = CountedLender.alive.value
        let stream = AsyncStream<LendingChunk> { continuation in
            for chunk in chunks { continuation.yield(LendingChunk(lender: CountedLender(chunk))) }
            continuation.finish()
        }
        let form = try await spooler.spool(stream, contentType: body.contentType)
        defer { form.removeFiles() }
        #expect(try form.files.first?.contents() == file)
        // The stream made every buffer before the spool began: the unread ones are alive. Of those read before the
        // filter decided, the spooler keeps the last, and the parser the one it reads.
        let unread = chunks.count - 1 - 1445
        let alive = held.value
        #expect(alive - before <= unread + 3, "\(alive - before - unread) read buffers held while the filter decided")
    }

    /// The first bytes a filter and a store see are a view of the file's first chunk: it is let go once the store
    /// has it, not held while the rest of a large file streams (a `ByteBuffer` a file, for an upload's length, with
    /// thousands of uploads in flight). The spool folder's writer holds three 1 MiB batches at most: the last chunks
    /// of a 6 MiB file come when the first is long written.
    @Test func theFirstChunkIsNotHeldWhileTheRestOfTheFileStreams() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = (0..<(6 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let body = try OneFileForm(file, filename: "f.bin", contentType: "application/octet-stream")
        let watch = LenderWatch()
        var spooler = MultipartSpooler(directory: folder.url, limits: .untimed)
        let expectedHead = Array(file.prefix(1445))
        spooler.fileFilter = { file in
            file.firstBytes == expectedHead ? .store : .refuse(status: 422, message: "not the file's first bytes")
        }
        let form = try await spooler.spool(
            AsyncStream.lending(body.chunks, watching: 1, watch, looks: 10), contentType: body.contentType)
        defer { form.removeFiles() }
        #expect(try form.files.first?.contents() == file)
        #expect(watch.aliveWhenLooked.count == 10)
        #expect(!watch.aliveWhenLooked.contains(true), "\(watch.aliveWhenLooked)")
    }
}
