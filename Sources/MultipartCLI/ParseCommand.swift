import ArgumentParser
import Crypto
import Foundation
import StreamingMultipart

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `multipart parse`: parts of a body from a file or standard input.
struct ParseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parse",
        abstract: "Parse a multipart/form-data body and list, save or count its parts.",
        discussion: """
            Reads FILE (or standard input) in 64 KiB chunks, as a server would.

              multipart build -F a=1 -F f=@photo.jpg --headers h.txt | multipart parse --content-type "$(sed -n 's/^Content-Type: //p' h.txt)" --json
              multipart parse --boundary XYZ --output-dir parts/ upload.body
            """
    )

    @Option(help: "The request's Content-Type header value, which holds the boundary.")
    var contentType: String?

    @Option(help: "The boundary itself, instead of --content-type (it may start with dashes).")
    var boundary: String?

    @Option(help: "The request's Content-Encoding: gzip, x-gzip, deflate or identity (the default).")
    var contentEncoding: String?

    @Flag(help: "Accept LF-only line endings and other departures common clients make.")
    var lenient = false

    @Flag(help: "Print the parts as JSON: name, filename, filename_star, content_type, headers, size, sha256.")
    var json = false

    @Option(help: "Write each part's body to a file in this folder, named from its index and a sanitized name.")
    var outputDir: String?

    @Flag(help: "Replace files an earlier run left in --output-dir (without it, an existing file is refused).")
    var force = false

    @Option(help: "The most parts to accept.")
    var maxParts = MultipartParser.Limits.default.maxParts

    @Option(help: "The most bytes in a field without a filename.")
    var maxFieldBytes = MultipartParser.Limits.default.maxFieldBytes

    @Flag(help: "Read the whole input first, then time only the parse: prints parts=N bytes=M parse_seconds=S.")
    var discard = false

    @Argument(help: "The body; - or nothing for standard input.")
    var file: String?

    func validate() throws {
        guard (contentType == nil) != (boundary == nil) else {
            throw ValidationError("give exactly one of --content-type and --boundary")
        }
        if discard && (json || outputDir != nil) { throw ValidationError("--discard parses and counts only") }
        if force && outputDir == nil { throw ValidationError("--force replaces files in --output-dir; give one") }
        guard maxParts >= 1 else { throw ValidationError("--max-parts must be at least 1, got \(maxParts)") }
        guard maxFieldBytes >= 1 else {
            throw ValidationError("--max-field-bytes must be at least 1, got \(maxFieldBytes)")
        }
    }

    func run() throws {
        // With --json every exit prints one whole JSON document: the report is opened before anything can fail,
        // and every failure, from the options to the last byte, closes it with an "error" member.
        var report = JSONReport(printing: json)
        var firstBytes: [UInt8] = []
        do {
            let (contentType, limits, mode) = parserSettings()
            if discard {
                let parser = try MultipartParser(contentType: contentType, limits: limits, mode: mode)
                return try runDiscarding(
                    parser, encoding: try ContentEncoding(headerValue: contentEncoding), firstBytes: &firstBytes)
            }
            let parser = try DecompressingMultipartParser(
                contentType: contentType, contentEncoding: contentEncoding, limits: limits, mode: mode)
            // Each part is printed as soon as it is whole: a body of a million parts holds one report at a time.
            try parseStreaming(parser, firstBytes: &firstBytes) { part in
                if json { report.add(part.json) } else { print(part.summary) }
            }
            report.finish()
        } catch {
            var failure = ParseFailure(error)
            if contentEncoding == nil, failure.code == MultipartError.Code.boundaryNotFound.name {
                failure.hint = CompressedInput.hint(firstBytes: firstBytes)
            }
            guard json else { throw BuildCommand.fail(failure.description) }
            report.finish(failing: failure)
            throw ExitCode(1)
        }
    }

    /// The `Content-Type`, limits and mode the options ask for.
    private func parserSettings() -> (String, MultipartParser.Limits, MultipartParser.Mode) {
        var limits = MultipartParser.Limits.default
        limits.maxParts = maxParts
        limits.maxFieldBytes = maxFieldBytes
        let contentType = contentType ?? "multipart/form-data; boundary=\"\(boundary!)\""
        return (contentType, limits, lenient ? .lenient : .strict)
    }

    private func openInput() throws -> Int32 {
        guard let file, file != "-" else { return STDIN_FILENO }
        let descriptor = open(file, O_RDONLY)
        guard descriptor >= 0 else {
            throw ParseFailure(code: "inputUnreadable", "cannot open \(file): \(String(cString: strerror(errno)))")
        }
        return descriptor
    }

    /// What one part came to.
    struct PartReport {
        var head: MultipartParser.PartHead
        var size = 0
        var digest = SHA256()
        var sha256 = ""

        /// One line: index, name, filename (`filename*` when sent, the library's one rule), type, size and SHA-256,
        /// tab-separated, with control characters escaped so that a part's name cannot forge lines or move the
        /// terminal's cursor.
        var summary: String {
            [
                String(head.index), Self.escaped(head.name), Self.escaped(head.preferredFilename ?? "-"),
                Self.escaped(head.contentType ?? "-"), "\(size) bytes", sha256,
            ].joined(separator: "\t")
        }

        var json: String {
            var headers: [(String, String)] = []
            for field in head.headers {
                if let index = headers.firstIndex(where: { $0.0 == field.name.rawName }) {
                    headers[index].1 += ", " + field.value
                } else {
                    headers.append((field.name.rawName, field.value))
                }
            }
            return JSONText.object([
                ("name", JSONText.string(head.name)),
                ("filename", JSONText.string(head.filename)),
                ("filename_star", JSONText.string(head.filenameStar)),
                ("content_type", JSONText.string(head.contentType)),
                ("headers", JSONText.object(headers.map { ($0.0, JSONText.string($0.1)) })),
                ("size", String(size)),
                ("sha256", JSONText.string(sha256)),
            ])
        }

        /// Lower-case hex digits of `bytes`.
        static func hex(_ bytes: some Sequence<UInt8>) -> String { Hex.lowercase(bytes) }

        /// `text` with `\` and every control character (C0, DEL, C1) written as an escape: `\t`, `\n`, `\r`,
        /// `\\`, or `\u{1b}`.
        static func escaped(_ text: String) -> String {
            var out = ""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\\": out += "\\\\"
                case "\t": out += "\\t"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value):
                    out += "\\u{\(String(scalar.value, radix: 16))}"
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out
        }
    }

    /// Parses the input in 64 KiB reads and hands each part's report to `report` once the part is whole.
    private func parseStreaming(
        _ initial: consuming DecompressingMultipartParser, firstBytes: inout [UInt8], report: (PartReport) -> Void
    ) throws {
        var parser = initial
        let input = try openInput()
        defer { if input != STDIN_FILENO { close(input) } }
        var current: PartReport?
        var sink: PartFile?
        if let outputDir { try PartFile.createFolder(outputDir) }
        // A part cut short by an error is not left behind: the folder holds whole parts only.
        defer { sink?.discard() }
        // A multipart/mixed part (`curl -F 'f=@a,b'`) is read through a parser of its own, and its files reported
        // as parts of the outer field, at its index.
        let (_, limits, mode) = parserSettings()
        var mixed: (parser: MultipartParser, head: MultipartParser.PartHead)?
        func handle(_ event: MultipartParser.Event, inside outer: MultipartParser.PartHead?) throws {
            switch event {
            case .partHeaders(var head):
                // A file inside part 3 is reported at index 3, and written as `3.0-…`, `3.1-…`.
                let label = outer.map { "\($0.index).\(head.index)" }
                if let outer {
                    head.index = outer.index
                } else if head.mixedBoundary != nil {
                    mixed = (try MultipartParser(mixedIn: head, limits: limits, mode: mode), head)
                    return
                }
                current = PartReport(head: head)
                if let outputDir {
                    sink = try PartFile(folder: outputDir, head: head, label: label, replacing: force)
                }
            case .bodyBytes(let bytes) where outer == nil && mixed != nil:
                try mixed!.parser.append(bytes)
                try drainMixed()
            case .bodyBytes(let bytes):
                current?.size += bytes.count
                current?.digest.update(data: bytes)
                try sink?.append(bytes)
            case .partEnd where outer == nil && mixed != nil:
                try mixed!.parser.finish()
                try drainMixed()
                mixed = nil
            case .partEnd:
                guard var whole = current else { break }
                whole.sha256 = PartReport.hex(whole.digest.finalize())
                try sink?.finish()
                sink = nil
                current = nil
                report(whole)
            case .end:
                break
            }
        }
        func drainMixed() throws {
            guard let outer = mixed?.head else { return }
            do {
                while let event = try mixed!.parser.next() { try handle(event, inside: outer) }
            } catch var error as MultipartError {
                error.message =
                    "inside part \(outer.index + 1) (\(outer.name.debugDescription), multipart/mixed): "
                    + error.message
                throw error
            }
        }
        func drain() throws {
            while let event = try parser.next() { try handle(event, inside: nil) }
        }
        while true {
            let chunk: [UInt8]
            do {
                chunk = try [UInt8](capacity: 64 * 1024) { try readInput(input, into: &$0) }
            } catch let failure as ReadFailure {
                throw ParseFailure(code: "inputUnreadable", "reading the input failed: \(failure.reason)")
            }
            if chunk.isEmpty { break }
            if firstBytes.count < 2 { firstBytes += chunk.prefix(2 - firstBytes.count) }
            try parser.append(chunk[...])
            try drain()
        }
        try parser.finish()
        try drain()
    }

    /// `--discard`: the whole input in memory, then only the parse (and the decompression, with
    /// `--content-encoding`) is timed, fed in 64 KiB slices (no copies).
    private func runDiscarding(_ parser: MultipartParser, encoding: ContentEncoding, firstBytes: inout [UInt8]) throws {
        let input = try openInput()
        defer { if input != STDIN_FILENO { close(input) } }
        let whole = try FileHandle(fileDescriptor: input, closeOnDealloc: false).readToEnd().map { [UInt8]($0) } ?? []
        firstBytes = Array(whole.prefix(2))
        let (parts, bytes, seconds) =
            encoding == .identity
            ? try Self.timeParse(whole, with: parser)
            : try Self.timeParse(whole, with: DecompressingMultipartParser(parser: parser, encoding: encoding))
        print("parts=\(parts) bytes=\(bytes) parse_seconds=\(String(format: "%.6f", seconds))")
    }

    /// Parses `body` in 64 KiB slices and counts parts and body bytes; with the decompressing parser, inflating is
    /// timed too. A function of its own: inlined into `runDiscarding`, the same loop ran at half the speed.
    @inline(never)
    static func timeParse<Parser: EventParser & ~Copyable>(_ body: [UInt8], with initial: consuming Parser) throws
        -> (parts: Int, bytes: Int, seconds: Double)
    {
        var parser = initial
        var parts = 0
        var bytes = 0
        let start = ContinuousClock.now
        var offset = 0
        repeat {
            let end = min(offset + 64 * 1024, body.count)
            try parser.append(body[offset..<end])
            offset = end
            while let event = try parser.next() {
                switch event {
                case .partHeaders: parts += 1
                case .bodyBytes(let slice): bytes += slice.count
                case .partEnd, .end: break
                }
            }
        } while offset < body.count
        try parser.finish()
        return (parts, bytes, (ContinuousClock.now - start).seconds)
    }
}

/// What `timeParse` needs of a parser: the plain one and the decompressing one alike.
protocol EventParser: ~Copyable {
    mutating func append(_ bytes: ArraySlice<UInt8>) throws
    mutating func next() throws -> MultipartParser.Event?
    mutating func finish() throws
}

extension MultipartParser: EventParser {}
extension DecompressingMultipartParser: EventParser {}

/// One part's body written to a new file inside the output folder.
///
/// The file name is the part's index, a `-`, and its filename by the library's one rule (`filename*` when sent, else
/// `filename`, else the field name) made safe by `ContentDisposition.safeBaseName`: no part can name a path outside
/// the folder, a hidden file, a Windows device, or an existing file (it is created with `O_EXCL`, and never through
/// a symbolic link; `--force` removes an existing file of that name first).
struct PartFile {
    let handle: FileHandle
    let path: String

    /// Creates the part's file; with `replacing`, a file of that name is first removed (a symbolic link itself, not
    /// what it points to), else it is refused as `outputExists`.
    init(folder: String, head: MultipartParser.PartHead, label: String? = nil, replacing: Bool) throws {
        path = (folder.hasSuffix("/") ? folder : folder + "/") + Self.fileName(for: head, label: label)
        if replacing && unlink(path) != 0 && errno != ENOENT {
            throw ParseFailure(code: "outputFailed", "cannot replace \(path): \(String(cString: strerror(errno)))")
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            if errno == EEXIST {
                throw ParseFailure(
                    code: "outputExists",
                    "\(path) already exists (from an earlier parse into this folder?): pass --force to replace it, "
                        + "or give an empty --output-dir")
            }
            throw ParseFailure(code: "outputFailed", "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// Creates the output folder and any missing parents, as `mkdir -p` does.
    static func createFolder(_ folder: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw ParseFailure(
                code: "outputFailed", "cannot create the folder \(folder): \(error.localizedDescription)")
        }
    }

    /// `label` stands for the index where one is given: `3.1` for the second file inside part 3 (multipart/mixed).
    static func fileName(for head: MultipartParser.PartHead, label: String? = nil) -> String {
        let base = ContentDisposition.safeBaseName(head.preferredFilename ?? head.name)
        return ContentDisposition.safeBaseName("\(label ?? String(head.index))-\(base)")  // within 255 bytes
    }

    /// Writes all of `bytes` (FileHandle retries interrupted and short writes).
    func append(_ bytes: ArraySlice<UInt8>) throws {
        do {
            try handle.write(contentsOf: bytes)
        } catch {
            throw ParseFailure(code: "outputFailed", "writing \(path) failed: \(error.localizedDescription)")
        }
    }

    func finish() throws {
        do {
            try handle.close()
        } catch {
            throw ParseFailure(code: "outputFailed", "closing \(path) failed: \(error.localizedDescription)")
        }
    }

    /// Closes and removes a part that did not arrive whole.
    func discard() {
        try? handle.close()
        unlink(path)
    }
}
