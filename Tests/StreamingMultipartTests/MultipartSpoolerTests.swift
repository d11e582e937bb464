import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A body source that sends `bytes` in chunks of `size` and then fails as a dropped connection does.
struct DroppedConnection: AsyncSequence {
    struct Reset: Error {}
    let bytes: [UInt8]
    let size: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        var remaining: ArraySlice<UInt8>
        let size: Int
        mutating func next() async throws -> [UInt8]? {
            guard !remaining.isEmpty else { throw Reset() }
            defer { remaining = remaining.dropFirst(size) }
            return Array(remaining.prefix(size))
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(remaining: bytes[...], size: size) }
}

/// MultipartSpooler: fields in memory, files on disk, limits, and nothing left behind on any failure.
@Suite struct MultipartSpoolerTests {
    static let photo: [UInt8] = {
        var random = SeededGenerator(seed: 7)
        return random.bytes(300_000)
    }()

    func sampleBody() throws -> MultipartBody {
        var body = MultipartBody()
        try body.append(.text("Sunset over the bay", name: "caption"))
        try body.append(
            .data(Data(Self.photo), name: "photo", filename: "../../etc/sun\"set.jpg", contentType: "image/jpeg"))
        try body.append(.text("one", name: "tag"))
        try body.append(.text("two", name: "tag"))
        try body.append(.data(Data(), name: "empty", filename: "empty.txt"))
        return body
    }

    @Test(arguments: [1, 7, 4096, 65536, 1 << 30])
    func spoolsFieldsAndFilesAtAnyChunking(size: Int) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let body = try sampleBody()
        let bytes = try body.bytes()
        let spooler = MultipartSpooler(directory: folder.url, limits: .untimed, digest: FNV1aDigest.self)
        let form = try await spooler.spool(chunkStream(bytes, size: size), contentType: body.contentType)

        #expect(form.fields.map(\.name) == ["caption", "tag", "tag"])
        #expect(form.value(of: "caption") == "Sunset over the bay")
        #expect(form.values(of: "tag") == ["one", "two"])
        #expect(form.value(of: "missing") == nil)
        #expect(form.files.map(\.name) == ["photo", "empty"])

        let photo = try #require(form.file(named: "photo"))
        #expect(photo.filename == "../../etc/sun\"set.jpg")
        #expect(photo.safeFilename == "sun_set.jpg")
        #expect(photo.contentType == "image/jpeg")
        #expect(photo.byteCount == Int64(Self.photo.count))
        #expect(photo.partIndex == 1)
        #expect(try photo.contents() == Self.photo)
        #expect(photo.digest?.algorithm == "fnv-1a-64")
        #expect(photo.digest?.hex == FNV1aDigest.hex(Self.photo))
        #expect(!photo.isInMemory)

        let empty = try #require(form.file(named: "empty"))
        #expect(empty.byteCount == 0)
        #expect(try empty.contents() == [])
        #expect(empty.digest?.hex == FNV1aDigest.hex([UInt8]()))

        // Named by the spooler, never by the client; the owner alone may read them.
        let names = try folder.contents()
        #expect(names.count == 2)
        for name in names {
            #expect(name.hasPrefix("upload-") && name.count == 7 + 32)
            #expect(name.dropFirst(7).allSatisfy { $0.isHexDigit })
            let path = folder.url.appendingPathComponent(name).path
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
        form.removeFiles()
        #expect(try folder.contents() == [])
        #expect(throws: MultipartError.self) { try photo.contents() }
    }

    @Test func withSpooledFormRemovesFilesWhenTheClosureReturnsOrThrows() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let body = try sampleBody()
        let bytes = try body.bytes()
        let spooler = MultipartSpooler(directory: folder.url, limits: .untimed)

        let count = try await spooler.withSpooledForm(chunkStream(bytes, size: 1000), contentType: body.contentType) {
            (form: SpooledForm) throws -> Int in
            #expect(try folder.contents().count == 2)
            return form.files.count
        }
        #expect(count == 2)
        #expect(try folder.contents() == [])

        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await spooler.withSpooledForm(chunkStream(bytes, size: 1000), contentType: body.contentType) { _ in
                #expect(try folder.contents().count == 2)
                throw Refused()
            }
        }
        #expect(try folder.contents() == [])
    }

    @Test func aFileMovedOutOfTheScopeStays() async throws {
        let folder = try TemporaryFolder()
        let kept = try TemporaryFolder()
        defer {
            folder.remove()
            kept.remove()
        }
        let body = try sampleBody()
        let destination = kept.url.appendingPathComponent("photo.jpg").path
        try await MultipartSpooler(directory: folder.url, limits: .untimed).withSpooledForm(
            chunkStream(try body.bytes(), size: 4096), contentType: body.contentType
        ) { form in
            let photo = try #require(form.file(named: "photo"))
            try photo.move(to: destination)
            #expect(photo.path == nil)
            #expect(throws: MultipartError.self) { try photo.move(to: destination + ".again") }
        }
        #expect(try folder.contents() == [])
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: destination))) == Self.photo)
    }

    @Test func aFormThatGoesAwayTakesItsFilesWithIt() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let body = try sampleBody()
        do {
            let form = try await MultipartSpooler(directory: folder.url, limits: .untimed).spool(
                chunkStream(try body.bytes(), size: 4096), contentType: body.contentType)
            #expect(form.files.count == 2)
            #expect(try folder.contents().count == 2)
        }
        #expect(try folder.contents() == [])
    }

    // MARK: Limits

    /// Empty fields hold no bytes, but each costs its name and a record: a flood of them passes maxMemoryBytes.
    @Test func aFloodOfEmptyFieldsPassesTheMemoryBudget() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var body = MultipartBody()
        for index in 0..<1000 { try body.append(.text("", name: "e\(index)")) }
        var limits = MultipartSpooler.Limits.untimed
        limits.parser.maxParts = 10_000
        limits.maxMemoryBytes = 64 << 10
        do {
            _ = try await MultipartSpooler(directory: folder.url, limits: limits).spool(
                chunkStream(try body.bytes(), size: 4096), contentType: body.contentType)
            Issue.record("a thousand empty fields fit in 64 KiB")
        } catch let error as MultipartError {
            #expect(error.code == .limitExceeded && error.message.contains("maxMemoryBytes"), "\(error)")
            #expect(error.partIndex.map { $0 > 400 && $0 < 600 } == true, "\(error)")
        }
        limits.maxMemoryBytes = 1 << 20
        let form = try await MultipartSpooler(directory: folder.url, limits: limits).spool(
            chunkStream(try body.bytes(), size: 4096), contentType: body.contentType)
        #expect(form.fields.count == 1000)
    }

    static let limitCases: [(String, MultipartSpooler.Limits)] = {
        var maxFiles = MultipartSpooler.Limits.untimed
        maxFiles.maxFiles = 1
        var maxDisk = MultipartSpooler.Limits.untimed
        maxDisk.maxDiskBytes = 100_000
        var maxTotalFields = MultipartSpooler.Limits.untimed
        maxTotalFields.maxMemoryBytes = 20
        var maxFile = MultipartSpooler.Limits.untimed
        maxFile.parser.maxFileBytes = 1000
        var maxField = MultipartSpooler.Limits.untimed
        maxField.parser.maxFieldBytes = 10
        var maxParts = MultipartSpooler.Limits.untimed
        maxParts.parser.maxParts = 3
        return [
            ("maxFiles", maxFiles), ("maxDiskBytes", maxDisk), ("maxMemoryBytes", maxTotalFields),
            ("maxFileBytes", maxFile), ("maxFieldBytes", maxField), ("maxParts", maxParts),
        ]
    }()

    @Test(arguments: limitCases)
    func aBreachNamesTheLimitAndLeavesNothing(limit: String, limits: MultipartSpooler.Limits) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var body = try sampleBody()
        try body.append(.data(Data(Self.photo), name: "second", filename: "second.jpg"))
        let spooler = MultipartSpooler(directory: folder.url, limits: limits)
        do {
            _ = try await spooler.spool(chunkStream(try body.bytes(), size: 8192), contentType: body.contentType)
            Issue.record("\(limit): no error")
        } catch let error as MultipartError {
            #expect(error.code == .limitExceeded)
            #expect(error.message.contains(limit), "\(error.message)")
        }
        #expect(try folder.contents() == [])
    }

    @Test func limitsBelowTheirLeastAreRefusedByName() async throws {
        var limits = MultipartSpooler.Limits.untimed
        limits.memoryThreshold = -1
        let body = try sampleBody()
        await #expect(throws: MultipartError.self) {
            _ = try await MultipartSpooler(directory: "/tmp", limits: limits).spool(
                chunkStream(try body.bytes(), size: 100), contentType: body.contentType)
        }
        limits = .default
        limits.maxFiles = 0
        do {
            try limits.validate()
            Issue.record("maxFiles 0 accepted")
        } catch let error as MultipartError {
            #expect(error.code == .invalidLimit && error.message.contains("maxFiles"))
        }
    }

    // MARK: Failures leave the folder as it was

    @Test func aClientThatDisconnectsMidFileLeavesNothing() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let body = try sampleBody()
        let bytes = try body.bytes()
        let cut = Array(bytes.prefix(200_000))  // inside the photo
        let spooler = MultipartSpooler(directory: folder.url, limits: .untimed)
        do {
            _ = try await spooler.spool(chunkStream(cut, size: 4096), contentType: body.contentType)
            Issue.record("a cut body spooled")
        } catch let error as MultipartError {
            #expect(error.code == .truncated)
        }
        #expect(try folder.contents() == [])
        await #expect(throws: DroppedConnection.Reset.self) {
            _ = try await spooler.spool(DroppedConnection(bytes: cut, size: 4096), contentType: body.contentType)
        }
        #expect(try folder.contents() == [])
    }

    @Test func aMalformedPartAfterAFileLeavesNothing() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let body = try sampleBody()
        var bytes = try body.bytes()
        bytes.removeLast(4)  // "--\r\n" of the close delimiter, then a bad one
        bytes += Array("XX\r\n".utf8)
        await #expect(throws: MultipartError.self) {
            _ = try await MultipartSpooler(directory: folder.url, limits: .untimed).spool(
                chunkStream(bytes, size: 4096), contentType: body.contentType)
        }
        #expect(try folder.contents() == [])
    }

    @Test func aCancelledTaskLeavesNothing() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let body = try sampleBody()
        let bytes = try body.bytes()
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        continuation.yield(Array(bytes.prefix(200_000)))  // the caption and most of the photo; the rest never comes
        let spooler = MultipartSpooler(directory: folder.url, limits: .untimed)
        let task = Task { try await spooler.spool(stream, contentType: body.contentType) }
        while try folder.contents().isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        task.cancel()
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        #expect(try folder.contents() == [])
        continuation.finish()
    }

    @Test func aMissingSpoolFolderIsAWriteFailureWithTheErrno() async throws {
        let body = try sampleBody()
        let spooler = MultipartSpooler(directory: "/nonexistent/spool", limits: .untimed)
        do {
            _ = try await spooler.spool(chunkStream(try body.bytes(), size: 4096), contentType: body.contentType)
            Issue.record("no error")
        } catch let error as MultipartError {
            #expect(error.code == .writeFailed)
            #expect((error.cause as? SystemCallError)?.errno == ENOENT)
            #expect(error.partIndex == 1)
        }
    }

    @Test(.enabled(if: SmallDisk.canMount, "needs root to mount a 1 MiB tmpfs"))
    func aFullDiskIsAWriteFailureWithENOSPCAndLeavesNothing() async throws {
        let disk = try SmallDisk(megabytes: 1)
        defer { disk.unmount() }
        var body = MultipartBody()
        try body.append(.text("a", name: "a"))
        for index in 0..<4 {
            try body.append(.data(Data(Self.photo), name: "f\(index)", filename: "f\(index).bin"))
        }
        do {
            _ = try await MultipartSpooler(directory: disk.path, limits: .untimed).spool(
                chunkStream(try body.bytes(), size: 65536), contentType: body.contentType)
            Issue.record("1.2 MB spooled onto a 1 MiB disk")
        } catch let error as MultipartError {
            #expect(error.code == .writeFailed)
            #expect((error.cause as? SystemCallError)?.errno == ENOSPC)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path) == [])
    }

    @Test(.enabled(if: SmallDisk.canMount, "needs root to mount a tmpfs"))
    func aFileMovedToAnotherFileSystemIsCopied() async throws {
        let disk = try SmallDisk(megabytes: 4)
        let folder = try TemporaryFolder()
        defer {
            disk.unmount()
            folder.remove()
        }
        let body = try sampleBody()
        let form = try await MultipartSpooler(directory: folder.url, limits: .untimed).spool(
            chunkStream(try body.bytes(), size: 4096), contentType: body.contentType)
        let destination = disk.path + "/kept.jpg"
        try #require(form.file(named: "photo")).move(to: destination)
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: destination))) == Self.photo)
        #expect(try folder.contents().count == 1)  // the empty file is still the form's
        form.removeFiles()
        #expect(try folder.contents() == [])
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path) == ["kept.jpg"])
    }

    // MARK: Memory threshold, charsets, compression

    @Test func smallFilesStayInMemoryUnderTheThreshold() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var body = MultipartBody()
        try body.append(.data(Data(repeating: 1, count: 1000), name: "small", filename: "small.bin"))
        try body.append(.data(Data(Self.photo), name: "large", filename: "large.bin"))
        try body.append(.data(Data(repeating: 2, count: 1024), name: "edge", filename: "edge.bin"))
        var limits = MultipartSpooler.Limits.untimed
        limits.memoryThreshold = 1024
        let form = try await MultipartSpooler(directory: folder.url, limits: limits, digest: FNV1aDigest.self).spool(
            chunkStream(try body.bytes(), size: 100), contentType: body.contentType)
        #expect(form.files.map(\.isInMemory) == [true, false, true])
        #expect(try form.files[0].contents() == [UInt8](repeating: 1, count: 1000))
        #expect(try form.files[1].contents() == Self.photo)
        #expect(form.files[1].digest?.hex == FNV1aDigest.hex(Self.photo))
        #expect(try form.files[2].contents() == [UInt8](repeating: 2, count: 1024))
        #expect(try folder.contents().count == 1)

        // A file that would pass the memory budget goes to disk instead.
        limits.maxMemoryBytes = 1500
        let tight = try await MultipartSpooler(directory: folder.url, limits: limits).spool(
            chunkStream(try body.bytes(), size: 100), contentType: body.contentType)
        #expect(tight.files.map(\.isInMemory) == [true, false, false])
    }

    @Test func fieldsAreDecodedPerCharset() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        func spool(_ parts: [(String, [UInt8], String?)]) async throws -> SpooledForm {
            var body = MultipartBody()
            for (name, bytes, type) in parts {
                try body.append(.data(Data(bytes), name: name, contentType: type))
            }
            return try await MultipartSpooler(directory: folder.url, limits: .untimed).spool(
                chunkStream(try body.bytes(), size: 3), contentType: body.contentType)
        }
        let cafe1252: [UInt8] = [0x63, 0x61, 0x66, 0xE9]
        let form = try await spool([("q", cafe1252, nil), ("_charset_", Array("windows-1252".utf8), nil)])
        #expect(form.charset == "windows-1252")
        #expect(form.value(of: "q") == "café")
        #expect(form.fields[0].bytes == cafe1252)

        let own = try await spool([("q", [0x82, 0xA0], "text/plain; charset=Shift_JIS"), ("r", Array("é".utf8), nil)])
        #expect(own.value(of: "q") == "あ")
        #expect(own.value(of: "r") == "é")

        let invalid = try await spool([("q", [0x66, 0xFF, 0x66], nil)])
        #expect(invalid.value(of: "q") == "f\u{FFFD}f")
        // The bytes as sent, not the text's UTF-8, wherever the two differ; the same bytes where they do not.
        #expect(invalid.fields[0].bytes == [0x66, 0xFF, 0x66])
        #expect(own.fields[0].bytes == [0x82, 0xA0] && own.fields[1].bytes == Array("é".utf8))
        let replacement = try await spool([("q", Array("f\u{FFFD}f".utf8), nil)])
        #expect(replacement.fields[0].bytes == Array("f\u{FFFD}f".utf8) && replacement.fields[0] != invalid.fields[0])

        do {
            _ = try await spool([("q", [0x41], nil), ("_charset_", Array("x-klingon".utf8), nil)])
            Issue.record("an unknown charset decoded")
        } catch let error as MultipartError {
            #expect(error.code == .unsupportedCharset)
            #expect(error.message.contains("x-klingon") && error.message.contains("\"q\""))
        }
    }

    @Test(arguments: ["utf-16", "UTF-16LE", "utf-16be", "unicode", "ucs-2"])
    func aFormInAnEncodingThatIsNotASCIICompatibleIsRefused(label: String) async throws {
        // Read as UTF-16, "abc" became "扡" and the odd last byte was dropped; no browser submits a form in it.
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        for (charsetField, partType) in [(label, nil), (nil, "text/plain; charset=\(label)")] as [(String?, String?)] {
            var body = MultipartBody()
            try body.append(.data(Data("abc".utf8), name: "q", contentType: partType))
            if let charsetField { try body.append(.text(charsetField, name: "_charset_")) }
            let error = await #expect(throws: MultipartError.self) {
                try await MultipartSpooler(directory: folder.url, limits: .untimed).spool(
                    chunkStream(try body.bytes(), size: 7), contentType: body.contentType)
            }
            #expect(error?.code == .unsupportedCharset)
            #expect(error?.message.contains("not ASCII-compatible") == true, "\(error?.message ?? "")")
            #expect(try folder.contents() == [])
        }
    }

    @Test func aGzippedFormSpoolsToTheSameFiles() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let body = try sampleBody()
        var reader = body.makeReader(compression: .gzip)
        let gzipped = try reader.readAll()
        let form = try await MultipartSpooler(directory: folder.url, limits: .untimed, digest: FNV1aDigest.self).spool(
            chunkStream(gzipped, size: 1000), contentType: body.contentType, contentEncoding: "gzip")
        #expect(form.file(named: "photo")?.digest?.hex == FNV1aDigest.hex(Self.photo))
        #expect(form.value(of: "caption") == "Sunset over the bay")
    }

    @Test func filenameStarWinsOverFilenameAsGoAndWerkzeugReadIt() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let body = crlf(
            "--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"plain.txt\"; "
                + "filename*=utf-8''star%C3%A9.txt\r\n\r\nx\r\n"
                + "--B\r\nContent-Disposition: form-data; name=\"g\"; filename*=utf-8''only%C3%A9.txt\r\n\r\ny\r\n--B--\r\n"
        )
        let form = try await MultipartSpooler(directory: folder.url, limits: .untimed).spool(
            chunkStream(body, size: 7), contentType: "multipart/form-data; boundary=B")
        #expect(form.files.map(\.filename) == ["staré.txt", "onlyé.txt"])
        #expect(form.files.map(\.safeFilename) == ["staré.txt", "onlyé.txt"])
    }

    @Test func safeBaseNames() {
        let cases: [(String, String)] = [
            ("photo.jpg", "photo.jpg"),
            ("../../etc/passwd", "passwd"),
            ("C:\\Users\\ann\\..\\report\".pdf", "report_.pdf"),
            ("..", "file"), (".", "file"), ("", "file"), ("/", "file"),
            (".bashrc", "bashrc"),
            ("  name. ", "name"),
            ("a\u{0}b\rc\nd\u{1B}e\u{7F}", "a_b_c_d_e_"),
            ("what?<is>:this*|", "what__is__this__"),
            ("résumé 履歴書.txt", "résumé 履歴書.txt"),
            // Windows devices, in any case, with or without an extension, with trailing spaces or dots.
            ("CON", "_CON"), ("nul.txt", "_nul.txt"), ("Com1.tar.gz", "_Com1.tar.gz"), ("LPT9", "_LPT9"),
            ("aux . ", "_aux"), ("prn.", "_prn"), ("COM¹.log", "_COM¹.log"), ("conin$", "_conin$"),
            ("CONSOLE.txt", "CONSOLE.txt"), ("COM10", "COM10"), ("nul-file", "nul-file"), ("xCON", "xCON"),
            // Controls and invisible characters: C1, bidi overrides and isolates, zero-width, BOM, soft hyphen.
            ("invoice\u{202E}fdp.exe", "invoice_fdp.exe"), ("a\u{9B}b\u{85}c", "a_b_c"),
            ("zero\u{200B}width\u{200D}joiner\u{FEFF}", "zero_width_joiner_"), ("\u{2066}x\u{2069}", "_x_"),
            ("soft\u{AD}hyphen\u{2028}line", "soft_hyphen_line"), ("\u{200E}\u{200F}.txt", "__.txt"),
        ]
        for (given, expected) in cases {
            #expect(ContentDisposition.safeBaseName(given) == expected, "\(given.debugDescription)")
        }
        let long = String(repeating: "é", count: 300) + ".jpeg"
        let safe = ContentDisposition.safeBaseName(long)
        #expect(safe.utf8.count <= 255 && safe.hasSuffix(".jpeg"))
        #expect(ContentDisposition.safeBaseName(String(repeating: "x", count: 400)).utf8.count == 255)
        #expect(ContentDisposition.safeBaseName("CON." + String(repeating: "x", count: 400)).utf8.count <= 255)
    }
}

/// A body of a head, `unit` repeated to about `size` bytes, and a tail, made a 64 KiB chunk at a time.
struct FloodBody: AsyncSequence, Sendable {
    let head: [UInt8]
    let unit: [UInt8]
    let tail: [UInt8]
    let size: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        let block: [UInt8]
        let tail: [UInt8]
        var pending: [UInt8]?
        var blocksLeft: Int

        mutating func next() async -> [UInt8]? {
            if let head = pending {
                pending = nil
                return head
            }
            if blocksLeft > 0 {
                blocksLeft -= 1
                return block
            }
            if blocksLeft == 0 {
                blocksLeft = -1
                return tail
            }
            return nil
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        let block = Array([[UInt8]](repeating: unit, count: Swift.max(1, 65536 / unit.count)).joined())
        return AsyncIterator(block: block, tail: tail, pending: head, blocksLeft: Swift.max(1, size / block.count))
    }
}

/// Hostile forms at 1, 16 and 64 MB: the spooler's time grows linearly (64 MB within 8× of 16 MB: a quadratic loop
/// gives 16×) and it leaves nothing behind.
///
/// The time is the CPU time of the one thread the spool runs on (a ``OneThreadExecutor``), not a wall clock, so the
/// check holds on a busy machine; the hashing thread's time is not counted.
@Suite(.serialized) struct SpoolerLinearTimeTests {
    static let boundary = "----WebKitFormBoundary7MA4YWxkTrZu0gW"

    static func spool(
        _ body: FloodBody, limits: MultipartSpooler.Limits, in folder: TemporaryFolder,
        contentType: String = "multipart/form-data; boundary=\(boundary)"
    ) async throws -> (SpooledForm, Duration) {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) else {
            throw MultipartError(code: .invalidState, message: "task executors need macOS 15")
        }
        let spooler = MultipartSpooler(directory: folder.url, limits: limits, digest: FNV1aDigest.self)
        let executor = OneThreadExecutor()
        defer { executor.shutdown() }
        return try await measureThreadCPUTime(on: executor) {
            try await spooler.spool(body, contentType: contentType)
        }
    }

    /// The time limit only stops a hang: a busy machine may take several times the idle one's wall time.
    @Test(.timeLimit(.minutes(10)))
    func manyTinyFields() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var limits = MultipartSpooler.Limits.untimed
        limits.parser.maxParts = 10_000_000
        limits.maxMemoryBytes = 1 << 30
        let unit = Array("--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n".utf8)
        var counts: [Int] = []
        func run(_ size: Int) async throws -> Duration {
            let body = FloodBody(head: [], unit: unit, tail: Array("--\(Self.boundary)--\r\n".utf8), size: size)
            let (form, time) = try await Self.spool(body, limits: limits, in: folder)
            counts.append(form.fields.count)
            return time
        }
        let small = try await run(1 << 20)
        let growth = try await linearGrowthRatio(
            limit: 8, medium: { try await run(16 << 20) }, large: { try await run(64 << 20) })
        print(
            "SpoolerLinearTimeTests: many tiny fields: CPU time \(small), \(growth.medium), \(growth.large); \(counts) fields"
        )
        #expect(growth.ratio < 8, "64 MB took \(growth.ratio)× the CPU time of 16 MB")
        #expect(counts[2] > counts[1] && counts[1] > counts[0])
        #expect(try folder.contents() == [])
    }

    /// An urlencoded form of many small fields full of escapes: each byte read once, each field kept once.
    @Test(.timeLimit(.minutes(10)))
    func manyTinyURLEncodedFields() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var limits = MultipartSpooler.Limits.untimed
        limits.parser.maxParts = 10_000_000
        limits.maxMemoryBytes = 1 << 30
        let padding = String(repeating: "+padding", count: 6)
        let unit = Array("items%5B%5D%5Bname%5D=a+b%2Bc%zz%C3%A9%4\(padding)&%&&=&".utf8)
        var counts: [Int] = []
        func run(_ size: Int) async throws -> Duration {
            let body = FloodBody(head: [], unit: unit, tail: Array("last=1".utf8), size: size)
            let (form, time) = try await Self.spool(
                body, limits: limits, in: folder, contentType: "application/x-www-form-urlencoded")
            counts.append(form.fields.count)
            #expect(
                form.fields.first?.name == "items[][name]"
                    && form.fields.first?.value == "a b+c%zzé%4" + String(repeating: " padding", count: 6))
            return time
        }
        let small = try await run(1 << 20)
        let growth = try await linearGrowthRatio(
            limit: 8, medium: { try await run(16 << 20) }, large: { try await run(64 << 20) })
        print(
            "SpoolerLinearTimeTests: many tiny urlencoded fields: CPU time \(small), \(growth.medium), "
                + "\(growth.large); \(counts) fields")
        #expect(growth.ratio < 8, "64 MB took \(growth.ratio)× the CPU time of 16 MB")
        #expect(counts[2] > counts[1] && counts[1] > counts[0])
    }

    /// urlencoded floods that make no field or one long one: separators alone (nothing kept; the body bound is
    /// raised so that they run to 64 MB), escapes that never end (`%4` again and again) and `+` in one value, each
    /// byte read once. The long value is held whole, as any field is, under a `maxFieldBytes` raised for the test.
    @Test(.timeLimit(.minutes(10)), arguments: ["&", "%4", "+"])
    func urlencodedFloodsReadEachByteOnce(unit: String) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var limits = MultipartSpooler.Limits.untimed
        limits.parser.maxFieldBytes = 1 << 30
        limits.maxMemoryBytes = 1 << 30
        func run(_ size: Int) async throws -> Duration {
            let head = unit == "&" ? [] : Array("flood=".utf8)
            let body = FloodBody(head: head, unit: Array(unit.utf8), tail: Array("&last=1".utf8), size: size)
            let (form, time) = try await Self.spool(
                body, limits: limits, in: folder, contentType: "application/x-www-form-urlencoded")
            #expect(form.value(of: "last") == "1" && form.fields.count == (unit == "&" ? 1 : 2))
            return time
        }
        let small = try await run(1 << 20)
        let growth = try await linearGrowthRatio(
            limit: 8, medium: { try await run(16 << 20) }, large: { try await run(64 << 20) })
        print(
            "SpoolerLinearTimeTests: urlencoded flood of \(unit.debugDescription): CPU time \(small), "
                + "\(growth.medium), \(growth.large)")
        #expect(growth.ratio < 8, "64 MB took \(growth.ratio)× the CPU time of 16 MB")
    }

    @Test(.timeLimit(.minutes(10)))
    func lineBreakFloodInAFile() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let head = Array(
            "--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f.bin\"\r\n\r\n".utf8)
        func run(_ size: Int) async throws -> Duration {
            let body = FloodBody(
                head: head, unit: Array("\r\n\r\r\n\n\r\n--".utf8), tail: Array("\r\n--\(Self.boundary)--\r\n".utf8),
                size: size)
            let (form, time) = try await Self.spool(body, limits: .default, in: folder)
            #expect(form.files.count == 1 && form.files[0].byteCount >= Int64(size) - 65536)
            #expect(try folder.contents().count == 1)
            form.removeFiles()
            return time
        }
        let small = try await run(1 << 20)
        let growth = try await linearGrowthRatio(
            limit: 8, medium: { try await run(16 << 20) }, large: { try await run(64 << 20) })
        print(
            "SpoolerLinearTimeTests: line-break flood in a file: CPU time \(small), \(growth.medium), \(growth.large)")
        #expect(growth.ratio < 8, "64 MB took \(growth.ratio)× the CPU time of 16 MB")
        #expect(try folder.contents() == [])
    }
}

/// A tmpfs of a few MiB, mounted for one test: a disk that fills up, and another file system.
struct SmallDisk {
    let path: String

    /// Whether this process may mount a tmpfs (root on Linux).
    static let canMount: Bool = {
        #if os(Linux)
        guard getuid() == 0, let disk = try? SmallDisk(megabytes: 1) else { return false }
        disk.unmount()
        return true
        #else
        return false
        #endif
    }()

    init(megabytes: Int) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("sm-disk-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let result = try runProgram("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path])
        guard result.status == 0 else {
            try? FileManager.default.removeItem(atPath: path)
            throw MultipartError(code: .writeFailed, message: "mount failed: \(result.stderr)")
        }
    }

    func unmount() {
        _ = try? runProgram("/bin/umount", [path])
        try? FileManager.default.removeItem(atPath: path)
    }
}
