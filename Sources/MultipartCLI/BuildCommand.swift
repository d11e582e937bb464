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

    @OptionGroup var form: FormArguments

    @Option(name: .shortAndLong, help: "Write the body here (default: standard output); a regular file atomically.")
    var output: String?

    @Option(help: "Write the Content-Type and Content-Length header lines to this file instead of standard error.")
    var headers: String?

    @Flag(
        help: """
            Print 'bytes=N build_seconds=S peak_rss_kb=K' when done: to standard output when -o names a file, else to \
            standard error.
            """)
    var stats = false

    private var compression: MultipartBody.Compression? { form.compression }

    func run() throws {
        let start = ContinuousClock.now
        do {
            let body = try form.makeBody()
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
            throw Self.fail(error.sentence)
        } catch let error as FormSpec.ParseError {
            throw Self.fail(error.description)
        }
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
