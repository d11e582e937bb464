import ArgumentParser
import Foundation
import StreamingMultipart

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `multipart build`: a body from curl-style `-F` arguments.
struct BuildCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "build",
        abstract: "Build a multipart/form-data body from curl-style -F arguments.",
        discussion: """
            Parts come in the order given. Content-Type (and Content-Length, when every part's length is known) \
            go to standard error, or to --headers FILE.

              multipart build -F caption='Sunset' -F photo=@sunset.jpg -o body.bin
              multipart build -F 'notes=<notes.txt' -F 'data=@dump.bin;type=application/x-dump;filename=d.bin'
            """
    )

    @Option(
        name: [.customShort("F"), .customLong("form")],
        help: ArgumentHelp(
            "A part, as curl's -F: name=value, name=@file, name=<file; then ;type=, ;filename=, ;headers=.",
            valueName: "name=content"))
    var form: [String] = []

    @Option(
        name: .customLong("form-string"),
        help: ArgumentHelp(
            "A text field taken literally (no @, < or ; handling).", valueName: "name=value"))
    var formString: [String] = []

    @Option(name: .shortAndLong, help: "Write the body here (default: standard output); a regular file atomically.")
    var output: String?

    @Option(help: "Use this boundary instead of a random one (1 to 70 RFC 2046 characters).")
    var boundary: String?

    @Option(help: "Write the Content-Type and Content-Length header lines to this file instead of standard error.")
    var headers: String?

    @Flag(help: "Compress the body with gzip (Content-Encoding: gzip).")
    var gzip = false

    @Flag(help: "Compress the body with deflate, zlib-wrapped (Content-Encoding: deflate).")
    var deflate = false

    @Option(help: "zlib's level for --gzip and --deflate: 1 (fastest) to 9 (smallest).")
    var compressionLevel = 6

    @Flag(
        help: """
            Print 'bytes=N build_seconds=S peak_rss_kb=K' when done: to standard output when -o names a file, else to \
            standard error.
            """)
    var stats = false

    func validate() throws {
        if form.isEmpty && formString.isEmpty {
            throw ValidationError("give at least one part with -F or --form-string")
        }
        if gzip && deflate { throw ValidationError("give at most one of --gzip and --deflate") }
        guard (1...9).contains(compressionLevel) else {
            throw ValidationError("--compression-level must be 1 to 9, got \(compressionLevel)")
        }
    }

    private var compression: MultipartBody.Compression? {
        gzip ? .gzip(level: compressionLevel) : deflate ? .deflate(level: compressionLevel) : nil
    }

    func run() throws {
        let start = ContinuousClock.now
        do {
            let body = try makeBody()
            let written = try writeBody(body)
            try writeHeaders(body, written: written)
            if stats {
                let seconds = (ContinuousClock.now - start).seconds
                let line = "bytes=\(written) build_seconds=\(seconds) peak_rss_kb=\(peakResidentKilobytes())\n"
                // Once: standard output carries the body unless -o names a file.
                let bodyOnStandardOutput = output == nil || output == "-"
                (bodyOnStandardOutput ? FileHandle.standardError : FileHandle.standardOutput).write(Data(line.utf8))
            }
        } catch let error as MultipartError {
            throw Self.fail(error.description)
        } catch let error as FormSpec.ParseError {
            throw Self.fail(error.description)
        }
    }

    private func makeBody() throws -> MultipartBody {
        var body = try boundary.map { MultipartBody(boundary: try MultipartBoundary($0)) } ?? MultipartBody()
        var forms = form.makeIterator()
        var strings = formString.makeIterator()
        let arguments = MultipartCommand.joiningDashedValues(Array(CommandLine.arguments.dropFirst()))
        for kind in Self.formOrder(in: arguments) {
            let spec = try kind == .form ? FormSpec(form: forms.next()!) : FormSpec(formString: strings.next()!)
            try body.append(spec.part())
        }
        return body
    }

    /// Writes atomically to a regular file (or a new one), else streams to the descriptor (stdout, a pipe,
    /// /dev/null).
    private func writeBody(_ body: MultipartBody) throws -> Int64 {
        guard let output, output != "-" else {
            return try body.write(toFileDescriptor: STDOUT_FILENO, compression: compression)
        }
        var info = stat()
        if stat(output, &info) != 0 || (info.st_mode & S_IFMT) == S_IFREG {
            // Under the umask, as curl.
            return try body.write(to: URL(fileURLWithPath: output), permissions: 0o666, compression: compression)
        }
        let descriptor = open(output, O_WRONLY | O_TRUNC)
        guard descriptor >= 0 else { throw Self.fail("cannot open \(output) for writing") }
        defer { close(descriptor) }
        return try body.write(toFileDescriptor: descriptor, compression: compression)
    }

    /// The header lines for the body just written: `Content-Encoding` when compressed, and `Content-Length` when
    /// known (a compressed body's length is what was written).
    private func writeHeaders(_ body: MultipartBody, written: Int64) throws {
        var text = "Content-Type: \(body.contentType)\n"
        if let compression { text += "Content-Encoding: \(compression.contentEncoding)\n" }
        if let length = compression == nil ? body.contentLength : written { text += "Content-Length: \(length)\n" }
        if let headers {
            try Data(text.utf8).write(to: URL(fileURLWithPath: headers))
        } else {
            FileHandle.standardError.write(Data(text.utf8))
        }
    }

    /// Prints one line to standard error and returns the exit code to throw.
    static func fail(_ message: String) -> ExitCode {
        FileHandle.standardError.write(Data("multipart: \(message)\n".utf8))
        return ExitCode(1)
    }

    enum FormKind { case form, formString }

    /// The order of `-F` and `--form-string` arguments on the command line, which ArgumentParser keeps within
    /// each option but not across the two.
    static func formOrder(in arguments: [String]) -> [FormKind] {
        var kinds: [FormKind] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" { break }
            switch argument {
            case "-F", "--form":
                kinds.append(.form)
                index += 1
            case "--form-string":
                kinds.append(.formString)
                index += 1
            case "-o", "--output", "--headers": index += 1
            default:
                if argument.hasPrefix("--form-string=") {
                    kinds.append(.formString)
                } else if argument.hasPrefix("--form=") || (argument.hasPrefix("-F") && argument.count > 2) {
                    kinds.append(.form)
                }
            }
            index += 1
        }
        return kinds
    }

    private func peakResidentKilobytes() -> Int {
        var usage = rusage()
        #if canImport(Darwin)
        getrusage(RUSAGE_SELF, &usage)
        return Int(usage.ru_maxrss) / 1024
        #else
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Int(usage.ru_maxrss)
        #endif
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
