import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import StreamingMultipart
import StreamingMultipartAsyncHTTPClient

/// `multipart send URL -F …`: builds a form and uploads it, as `curl -F` does, with AsyncHTTPClient.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Build a multipart/form-data body from curl-style -F arguments and send it.",
        discussion: """
            The body is never held in memory: files are read as the connection takes them, with a Content-Length \
            whenever every part's length is known. The response body goes to standard output (or -o FILE); \
            progress to standard error.

              multipart send http://localhost:8080/upload -F caption='Sunset' -F photo=@sunset.jpg
              multipart send https://example.com/api -F doc=@report.pdf -H 'X-Tenant: 7' --retry 3 -L --fail

            Exit status, as curl's: 0 done (any HTTP status without --fail); 1 usage or a form that cannot be \
            built; 6 host not resolved; 7 connection refused or failed; 22 HTTP status of 400 or more with \
            --fail; 23 the response could not be written; 26 a file part could not be opened or read; 28 \
            timeout; 35 TLS handshake failed; 47 too many redirects; 52 no answer; 56 the connection broke while \
            receiving; 60 the server's certificate was not trusted.
            """
    )

    @Argument(help: "Where to send the form: an http or https URL.")
    var url: String

    @OptionGroup var form: FormArguments

    @Option(
        name: [.customShort("H"), .customLong("header")],
        help: ArgumentHelp("A request header, 'Name: value'; repeatable.", valueName: "header"))
    var header: [String] = []

    @Option(name: [.customShort("X"), .customLong("request")], help: "The method (default POST).")
    var request = "POST"

    @Option(name: [.short, .long], help: ArgumentHelp("Write the response body here.", valueName: "file"))
    var output: String?

    @Flag(name: [.short, .long], help: "Exit with status 22, writing nothing, when the HTTP status is 400 or more.")
    var fail = false

    @Flag(name: [.customShort("L"), .customLong("location")], help: "Follow redirects (307/308 resend the body).")
    var location = false

    @Option(help: "The most redirects followed with -L.")
    var maxRedirs = 50

    @Option(help: "Retry this many times after a connection failure or an answer of 408, 429 or 5xx.")
    var retry = 0

    @Option(help: "Seconds before the first retry (doubling after), unless the server sends Retry-After.")
    var retryDelay: Double = 1

    @Option(
        name: [.customShort("m"), .customLong("max-time")],
        help: ArgumentHelp("The most seconds the whole transfer may take.", valueName: "seconds"))
    var maxTime: Double?

    @Option(help: ArgumentHelp("The most seconds to wait for a connection.", valueName: "seconds"))
    var connectTimeout: Double = 10

    @Option(
        name: [.customShort("u"), .customLong("user")],
        help: ArgumentHelp("Basic authentication.", valueName: "user:password"))
    var user: String?

    @Option(help: ArgumentHelp("Bearer authentication.", valueName: "token"))
    var oauth2Bearer: String?

    @Option(help: ArgumentHelp("Trust the certificates in this PEM file for HTTPS.", valueName: "file"))
    var cacert: String?

    @Flag(name: [.customShort("k"), .long], help: "Accept any server certificate (HTTPS without verification).")
    var insecure = false

    @Option(
        help: ArgumentHelp(
            "Send at most this many bytes per second (a K, M or G suffix multiplies by 1024).", valueName: "speed"))
    var limitRate: String?

    @Option(help: "Progress on standard error: bar (redrawn in place), plain (a line a second), none.")
    var progress: ProgressStyle?

    @Flag(name: [.short, .long], help: "Print no progress and no retry notices; errors still go to standard error.")
    var silent = false

    enum ProgressStyle: String, ExpressibleByArgument, CaseIterable { case bar, plain, none }

    func validate() throws {
        guard let url = URL(string: url), ["http", "https"].contains(url.scheme?.lowercased()), url.host != nil else {
            throw ValidationError("\(self.url.debugDescription) is not an http or https URL")
        }
        _ = try requestHeaders()
        guard retry >= 0, maxRedirs >= 0 else { throw ValidationError("--retry and --max-redirs must be 0 or more") }
        guard retryDelay >= 0, connectTimeout > 0, maxTime.map({ $0 > 0 }) ?? true else {
            throw ValidationError("--retry-delay, --connect-timeout and --max-time must be positive numbers")
        }
        if let limitRate { _ = try Self.bytesPerSecond(limitRate) }
        if let cacert, !FileManager.default.isReadableFile(atPath: cacert) {
            throw ValidationError("--cacert \(cacert): no readable file there")
        }
    }

    /// The form errors that mean a file part could not be opened.
    private static let unreadableFile: [MultipartError.Code] = [.fileNotFound, .fileUnreadable, .notARegularFile]

    func run() async throws {
        let body: MultipartBody
        do {
            body = try form.makeBody()
        } catch let error as MultipartError where Self.unreadableFile.contains(error.code) {
            // curl's status for a file part it cannot open: 26, "failed to open/read local data".
            FileHandle.standardError.write(Data("multipart: \(error.description)\n".utf8))
            throw ExitCode(26)
        } catch let error as MultipartError {
            throw BuildCommand.fail(error.description)
        } catch let error as FormSpec.ParseError {
            throw BuildCommand.fail(error.description)
        }
        if (retry > 0 || location) && !body.isReproducible && !silent {
            let note = "a part reads standard input, which can be read once: no retry, and no redirect resends it"
            FileHandle.standardError.write(Data("multipart: \(note)\n".utf8))
        }
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: try clientConfiguration())
        let display = SendProgress(style: progressStyle, body: body)
        let outcome: Result<Void, any Error>
        do {
            try await withDeadline(maxTime) { try await self.send(body, with: client, display: display) }
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        display.finish()
        try? await client.shutdown()
        if case .failure(let error) = outcome {
            if let code = error as? ExitCode { throw code }
            let failure = SendFailure(error, url: url, maxTime: maxTime)
            FileHandle.standardError.write(Data("multipart: \(failure.message)\n".utf8))
            throw ExitCode(failure.exitCode)
        }
    }

    /// Sends the form and writes the answer.
    private func send(_ body: MultipartBody, with client: HTTPClient, display: SendProgress) async throws {
        var options = HTTPClient.MultipartUploadOptions()
        options.retry = .init(attempts: retry, initialDelay: .milliseconds(Int64(retryDelay * 1000)))
        options.maxRedirects = location ? maxRedirs : 0
        options.compression = form.compression
        let silent = self.silent
        options.onEvent = { event in
            guard !silent, case .retrying(let attempt, let of, let delay, let reason) = event else { return }
            display.note("\(reason); attempt \(attempt) of \(of) in \(SendProgress.seconds(delay))")
        }
        if let rate = try limitRate.map(Self.bytesPerSecond) {
            // A pause after each buffer, as long as sending it at the rate takes: ten or more buffers a second.
            let packet = max(1, min(rate / 10, options.bufferSize))
            options.throttle = .init(
                packetSize: packet, delay: .nanoseconds(Int64(Double(packet) / Double(rate) * 1e9)))
        }
        let response = try await client.upload(
            body, to: url, method: HTTPMethod(rawValue: request.uppercased()), headers: try requestHeaders(),
            options: options
        ) { display.update($0) }
        display.finish()
        let status = response.status
        if location, !silent,
            let target = Self.refusedInsecureRedirect(status: Int(status.code), headers: response.headers)
        {
            // The one redirect -L does not follow where curl would: the body and headers would go out in clear.
            display.note("not following the redirect from https to \(target): the answer is the redirect itself")
        }
        if fail && status.code >= 400 {
            throw SendFailure.httpStatus(Int(status.code), reason: status.reasonPhrase)
        }
        let sink = try ResponseSink(path: output)
        for try await buffer in response.body {
            try sink.write(buffer)
        }
        try sink.close()
    }

    /// The `http` address a redirect answer points to when it is the final answer under `-L`: the upload never
    /// follows a redirect from `https` to `http` (`HTTPClient.MultipartUploadOptions.allowsInsecureRedirects`), and every other
    /// redirect it follows or fails on (too many).
    static func refusedInsecureRedirect(status: Int, headers: HTTPHeaders) -> String? {
        guard [301, 302, 303, 307, 308].contains(status), let target = headers.first(name: "location"),
            target.lowercased().hasPrefix("http:")
        else { return nil }
        return target
    }

    private var progressStyle: ProgressStyle {
        if silent { return .none }
        return progress ?? (isatty(STDERR_FILENO) == 1 ? .bar : .plain)
    }

    /// `-H` lines, `-u` and `--oauth2-bearer` as headers.
    private func requestHeaders() throws -> HTTPHeaders {
        var headers = HTTPHeaders()
        for line in header {
            guard let colon = line.firstIndex(of: ":") else {
                throw ValidationError("-H \(line.debugDescription): expected 'Name: value'")
            }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, name.allSatisfy(Self.isTokenCharacter),
                !value.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" })
            else {
                throw ValidationError("-H \(line.debugDescription): not a valid header")
            }
            headers.add(name: name, value: value)
        }
        if let user {
            headers.replaceOrAdd(name: "Authorization", value: "Basic " + Data(user.utf8).base64EncodedString())
        }
        if let oauth2Bearer { headers.replaceOrAdd(name: "Authorization", value: "Bearer \(oauth2Bearer)") }
        if !headers.contains(name: "User-Agent") {
            headers.add(name: "User-Agent", value: "multipart/\(MultipartCommand.version)")
        }
        return headers
    }

    private func clientConfiguration() throws -> HTTPClient.Configuration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let cacert { tls.trustRoots = .file(cacert) }
        if insecure { tls.certificateVerification = .none }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .disallow,
            timeout: .init(connect: .milliseconds(Int64(connectTimeout * 1000))))
        configuration.connectionPool.retryConnectionEstablishment = false
        return configuration
    }

    /// A character of an RFC 9110 token (§5.6.2), which a header name is.
    static func isTokenCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "!#$%&'*+-.^_`|~".contains(character))
    }

    /// `--limit-rate`: bytes, or with a K, M or G suffix (powers of 1024), as curl reads it.
    static func bytesPerSecond(_ text: String) throws -> Int {
        let units: [Character: Int] = ["k": 1 << 10, "m": 1 << 20, "g": 1 << 30]
        let unit = text.last.flatMap { units[Character($0.lowercased())] }
        guard let number = Double(unit == nil ? text : String(text.dropLast())), number >= 1 else {
            throw ValidationError("--limit-rate \(text.debugDescription): expected bytes per second, as 500K or 2M")
        }
        return Int(number * Double(unit ?? 1))
    }
}

/// Runs `operation`, cancelling it after `seconds` (nil: no limit) with ``SendFailure/timedOut``.
private func withDeadline(_ seconds: Double?, _ operation: @escaping @Sendable () async throws -> Void) async throws {
    guard let seconds else { return try await operation() }
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
            throw SendFailure.timedOut
        }
        defer { group.cancelAll() }
        try await group.next()
    }
}
