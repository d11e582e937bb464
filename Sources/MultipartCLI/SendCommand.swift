import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import StreamingMultipart
import StreamingMultipartAsyncHTTPClient
import StreamingMultipartUploadClient

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
            timeout; 35 TLS handshake failed; 47 too many redirects; 52 no answer; 55 a resumed upload given up \
            (the server kept refusing what it was sent); 56 the connection broke while receiving; 60 the server's \
            certificate was not trusted.
            """
    )

    @Argument(help: "Where to send the form: an http or https URL (without a scheme, http, as curl reads it).")
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

    @Flag(help: "Exit with status 22 when the HTTP status is 400 or more, after writing the body.")
    var failWithBody = false

    @Flag(name: [.short, .long], help: "Write the response's status line and headers before its body.")
    var include = false

    @Option(
        name: [.customShort("D"), .customLong("dump-header")],
        help: ArgumentHelp(
            "Write the response's status line and headers here (- for standard output).", valueName: "file"))
    var dumpHeader: String?

    @Option(
        name: [.customShort("w"), .customLong("write-out")],
        help: ArgumentHelp(
            "Write this to standard output at the end, with %{http_code}, %{size_upload}, %{size_download}, "
                + "%{time_total}, %{speed_upload}, %{speed_download}, %{url_effective}, %{num_redirects} and "
                + "%{content_type} replaced, as curl does.",
            valueName: "format"))
    var writeOut: String?

    @Flag(
        name: [.short, .long],
        help: "Write the request's head (> lines) and the response's (< lines) to standard error.")
    var verbose = false

    @Flag(name: [.customShort("L"), .customLong("location")], help: "Follow redirects (307/308 resend the body).")
    var location = false

    @Option(help: "The most redirects followed with -L.")
    var maxRedirs = 50

    @Option(help: "Retry this many times after a connection failure or an answer of 408, 429 or 5xx.")
    var retry = 0

    @Option(help: "Seconds before the first retry (doubling after), unless the server sends Retry-After.")
    var retryDelay: Double = 1

    @Flag(
        help: "With --retry: retry every failure, any HTTP status of 400 or more and any transfer error, as curl does.")
    var retryAllErrors = false

    @Option(
        name: [.customShort("m"), .customLong("max-time")],
        help: ArgumentHelp("The most seconds the whole transfer may take.", valueName: "seconds"))
    var maxTime: Double?

    @Option(help: ArgumentHelp("The most seconds to wait for a connection.", valueName: "seconds"))
    var connectTimeout: Double = 10

    @Flag(help: "Do not offer the server to resume the upload after a dropped connection (sent whole again instead).")
    var noResume = false

    @Option(
        help: ArgumentHelp(
            "The interop version of the resumable uploads draft offered: 8 (draft 09) or 6 (drafts 04-05, "
                + "swift-nio-extras' server, which refuses 8 with 400).",
            valueName: "version"))
    var resumeVersion = "8"

    @Flag(
        help: """
            Create the resumable upload without its bytes first (answered 201 with its location), then send the body: \
            for a server behind a proxy that cannot pass a 104 on (nginx 1.22). Only for a server known to resume \
            uploads.
            """)
    var createUploadFirst = false

    @Option(
        name: .customLong("expect100-timeout"),
        help: ArgumentHelp(
            "The most seconds a body over 1 MiB waits for the server's 100 Continue before it is sent anyway.",
            valueName: "seconds"))
    var expect100Timeout: Double = 1

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

    @Flag(
        name: .customLong("http1.1"),
        help: "Speak HTTP/1.1 only: over https too, where HTTP/2 is used when the server offers it (ALPN).")
    var http11 = false  // curl's --http1.1

    @Flag(
        help: """
            Use HTTP/2, as curl's --http2: over https, by ALPN (the default); over http, HTTP/1.1, as curl when the \
            server takes no upgrade.
            """)
    var http2 = false

    @Flag(
        help: """
            HTTP/2 without TLS (h2c) with prior knowledge, as curl's: not supported, since AsyncHTTPClient speaks \
            HTTP/2 only after ALPN; exits 1 saying so.
            """)
    var http2PriorKnowledge = false

    @Option(
        name: [.customShort("b"), .customLong("cookie")],
        help: ArgumentHelp(
            "Send cookies: 'name=value; other=2' as it is, or those of a file that match the URL (the Netscape "
                + "format curl writes, or Set-Cookie: lines).",
            valueName: "data|file"))
    var cookie: String?

    @Option(
        name: [.customShort("c"), .customLong("cookie-jar")],
        help: ArgumentHelp(
            "Write the cookies of the -b file and those the answer sets to this file, in the Netscape format.",
            valueName: "file"))
    var cookieJar: String?

    @Option(
        name: [.customShort("x"), .customLong("proxy")],
        help: ArgumentHelp(
            "Go through this proxy: [http://][user:password@]host[:port] (CONNECT, for http and https URLs) or "
                + "socks5://host[:port]; the port is 1080 unless given; \"\" for none. Without it: http_proxy, "
                + "https_proxy/HTTPS_PROXY and all_proxy/ALL_PROXY, as curl reads them.",
            valueName: "proxy"))
    var proxy: String?

    @Option(
        help: ArgumentHelp(
            "Hosts reached without a proxy, comma-separated, * for all (else no_proxy).", valueName: "hosts"))
    var noproxy: String?

    @Option(
        help: ArgumentHelp(
            "Send at most this many bytes per second (a K, M or G suffix multiplies by 1024).", valueName: "speed"))
    var limitRate: String?

    @Option(help: "Progress on standard error: bar (redrawn in place), plain (a line a second), none.")
    var progress: ProgressStyle?

    @Flag(name: [.short, .long], help: "Print no progress and no retry notices; errors still go to standard error.")
    var silent = false

    enum ProgressStyle: String, ExpressibleByArgument, CaseIterable { case bar, plain, none }

    /// The URL as curl reads it: one without `scheme://` is `http://`.
    var target: String { url.contains("://") ? url : "http://" + url }

    func validate() throws {
        guard let url = URL(string: target), ["http", "https"].contains(url.scheme?.lowercased()), url.host != nil
        else {
            throw ValidationError("\(self.url.debugDescription) is not an http or https URL")
        }
        guard !(fail && failWithBody) else { throw ValidationError("--fail and --fail-with-body exclude each other") }
        guard ResumableUpload.clientVersions.contains(resumeVersion) else {
            let spoken = ResumableUpload.clientVersions.sorted().joined(separator: " or ")
            throw ValidationError("--resume-version takes \(spoken), not \(resumeVersion.debugDescription)")
        }
        guard !http2PriorKnowledge else {
            throw ValidationError(
                "--http2-prior-knowledge is not supported: send speaks HTTP/2 only over https, where ALPN picks it "
                    + "(the default); for a server of h2c alone, use curl --http2-prior-knowledge")
        }
        guard !(http11 && http2) else { throw ValidationError("--http1.1 and --http2 exclude each other") }
        _ = try requestHeaders()
        guard retry >= 0, maxRedirs >= 0 else { throw ValidationError("--retry and --max-redirs must be 0 or more") }
        guard retryDelay >= 0, connectTimeout > 0, maxTime.map({ $0 > 0 }) ?? true, expect100Timeout >= 0 else {
            throw ValidationError(
                "--retry-delay, --connect-timeout, --max-time and --expect100-timeout must be positive numbers")
        }
        if let limitRate { _ = try Self.bytesPerSecond(limitRate) }
        do {
            // The first URL's proxy alone: one a redirect needs is read when it is followed (exit 5 then, as curl).
            _ = try proxySetting(for: url)
        } catch let error as ProxySetting.Invalid {
            throw ValidationError(error.description)
        }
        if let cacert, !FileManager.default.isReadableFile(atPath: cacert) {
            throw ValidationError("--cacert \(cacert): no readable file there")
        }
    }

    /// The most resumptions of one upload (`--no-resume`: none).
    static let maxResumptions = 10

    /// The form errors that mean a file part could not be opened.
    private static let unreadableFile: [MultipartError.Code] = [.fileNotFound, .fileUnreadable, .notARegularFile]

    func run() async throws {
        let body: MultipartBody
        do {
            body = try form.makeBody()
        } catch let error as MultipartError where Self.unreadableFile.contains(error.code) {
            // curl's status for a file part it cannot open: 26, "failed to open/read local data".
            FileHandle.standardError.write(Data("multipart: \(error.sentence)\n".utf8))
            throw ExitCode(26)
        } catch let error as MultipartError {
            throw BuildCommand.fail(error.sentence)
        } catch let error as FormSpec.ParseError {
            throw BuildCommand.fail(error.description)
        }
        if (retry > 0 || location) && !body.isReproducible && !silent {
            let note = "a part reads standard input, which can be read once: no retry, and no redirect resends it"
            FileHandle.standardError.write(Data("multipart: \(note)\n".utf8))
        }
        let (option, noProxy, environment) = (proxy, noproxy, ProcessInfo.processInfo.environment)
        let clients = ProxyClients(configuration: try clientConfiguration()) { url in
            try ProxySetting.forURL(url, option: option, noProxy: noProxy, environment: environment)
        }
        // The first URL's proxy was read in validate(): a redirect's is read when it is followed.
        let client = try clients.client(for: URL(string: target) ?? URL(fileURLWithPath: "/"))
        let display = SendProgress(style: progressStyle, body: body)
        let outcome: Result<Void, any Error>
        do {
            if let maxTime {
                // -m: the whole send, cancelled with SendFailure.timedOut.
                try await withDeadline(milliseconds(maxTime), timedOut: SendFailure.timedOut) {
                    try await self.send(body, with: client, clients: clients, display: display)
                }
            } else {
                try await send(body, with: client, clients: clients, display: display)
            }
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        display.finish()
        await clients.shutdown()
        if case .failure(let error) = outcome {
            if let code = error as? ExitCode { throw code }
            let failure = SendFailure(error, url: target, maxTime: maxTime)
            FileHandle.standardError.write(Data("multipart: \(failure.message)\n".utf8))
            throw ExitCode(failure.exitCode)
        }
    }

    /// Sends the form through `client` (the first URL's) and writes the answer; each request goes through the
    /// client of its own URL's proxy (`clients`).
    private func send(
        _ body: MultipartBody, with client: HTTPClient, clients: ProxyClients, display: SendProgress
    ) async throws {
        var options = HTTPClient.MultipartUploadOptions()
        options.client = { try clients.client(for: $0) }
        options.retry = .init(attempts: retry, initialDelay: milliseconds(retryDelay))
        options.retry.retriesEveryError = retryAllErrors
        options.maxRedirects = location ? maxRedirs : 0
        options.compression = form.compression
        options.expectContinueTimeout = milliseconds(expect100Timeout)
        options.maxResumptions = noResume ? 0 : Self.maxResumptions
        options.resumableInteropVersion = resumeVersion
        options.createsUploadFirst = createUploadFirst
        let total = body.contentLength
        let silent = self.silent
        let verbose = self.verbose
        let transfer = SharedTransferReport(TransferReport(urlEffective: target))
        options.onEvent = { event in
            switch event {
            case .retrying(let attempt, let of, let delay, let reason):
                if !silent { display.note("\(reason); attempt \(attempt) of \(of) in \(SendProgress.seconds(delay))") }
                transfer.update { $0.interimHeads = [] }
            case .redirecting(_, let next):
                transfer.update {
                    $0.redirects += 1
                    $0.urlEffective = next
                    $0.interimHeads = []
                }
            case .resuming(let from, let attempt, let of):
                transfer.update { $0.interimHeads = [] }
                let whole = total.map { " of \($0)" } ?? ""
                if !silent {
                    display.note(
                        "the connection dropped; resuming from byte \(from)\(whole) (attempt \(attempt) of \(of))")
                }
            case .startingOver:
                transfer.update { $0.interimHeads = [] }
                if !silent {
                    display.note("the server no longer knows the upload (it may have restarted); sending it again")
                }
            case .interimResponse(let interim):
                let head = TransferReport.head(
                    version: interim.version, status: interim.status, headers: interim.headers)
                transfer.update { $0.interimHeads.append(head) }
                // curl's -v shows an interim head without the empty line that ends it (one CRLF, one Character).
                if verbose {
                    FileHandle.standardError.write(Data(TransferReport.marked(String(head.dropLast()), "<").utf8))
                }
            }
        }
        if let rate = try limitRate.map(Self.bytesPerSecond) {
            // A pause after each buffer, as long as sending it at the rate takes: ten or more buffers a second.
            let packet = max(1, min(rate / 10, options.bufferSize))
            options.throttle = .init(
                packetSize: packet, delay: .nanoseconds(Int64(Double(packet) / Double(rate) * 1e9)))
        }
        let method = HTTPMethod(rawValue: request.uppercased())
        var headers = try requestHeaders()
        var jar = CookieJar()
        if let cookie, let url = URL(string: target) {
            if cookie.contains("=") {
                headers.add(name: "Cookie", value: cookie)
            } else if let text = try? String(contentsOfFile: cookie, encoding: .utf8) {
                jar = CookieJar(file: text, host: url.host ?? "")
                // Each request's cookies from the jar, by its own domain and path (a redirect's too), as curl.
                let file = jar
                options.cookies = { file.header(for: $0) }
            } else if !silent {
                display.note("cannot read the cookie file \(cookie): no cookies sent")
            }
        }
        if verbose {
            var sent = HTTPClient.uploadHeaders(headers, for: body, options: options)
            if let cookies = options.cookies, let url = URL(string: target), let value = cookies(url) {
                sent.replaceOrAdd(name: "Cookie", value: value)
            }
            FileHandle.standardError.write(Data(Self.requestHead(method, target, sent, body, options).utf8))
        }
        let start = ContinuousClock.now
        /// `-w`'s line: written for every outcome, as curl writes it (`000` for an answer that never came).
        func writeReport(code: Int, received: Int64 = 0, contentType: String? = nil) {
            guard let writeOut else { return }
            var report = transfer.value
            report.httpCode = code
            report.sizeDownload = received
            report.timeTotal = ContinuousClock.now - start
            report.contentType = contentType
            let (text, unknown) = report.writeOut(writeOut)
            for name in unknown {
                FileHandle.standardError.write(Data("multipart: unknown --write-out variable: '\(name)'\n".utf8))
            }
            FileHandle.standardOutput.write(Data(text.utf8))
        }
        let response: HTTPClientResponse
        do {
            response = try await client.upload(body, to: target, method: method, headers: headers, options: options) {
                progress in
                display.update(progress)
                transfer.update { $0.sizeUpload = Int64(progress.completedBytes) }
            }
        } catch {
            display.finish()
            writeReport(code: 0)
            throw error
        }
        display.finish()
        let status = response.status
        if location, !silent,
            let target = Self.refusedInsecureRedirect(status: Int(status.code), headers: response.headers)
        {
            // The one redirect -L does not follow where curl would: the body and headers would go out in clear.
            display.note("not following the redirect from https to \(target): the answer is the redirect itself")
        }
        let head = transfer.value.interimHeads.joined() + TransferReport.head(of: response)
        if verbose {
            FileHandle.standardError.write(Data(TransferReport.marked(TransferReport.head(of: response), "<").utf8))
        }
        if let dumpHeader { try Self.write(head, to: dumpHeader) }
        if let cookieJar {
            let host = URL(string: transfer.value.urlEffective)?.host ?? ""
            for value in response.headers["Set-Cookie"] {
                if let cookie = CookieJar.setCookie(value, host: host) { jar.add(cookie) }
            }
            try Self.write(jar.netscapeFile(), to: cookieJar)
        }
        if fail && status.code >= 400 {
            writeReport(code: Int(status.code), contentType: response.headers.first(name: "Content-Type"))
            throw SendFailure.httpStatus(Int(status.code), reason: status.reasonPhrase)
        }
        let sink = try ResponseSink(path: output)
        if include { try sink.write(ByteBuffer(string: head)) }
        var received: Int64 = 0
        for try await buffer in response.body {
            received += Int64(buffer.readableBytes)
            try sink.write(buffer)
        }
        try sink.close()
        let contentType = response.headers.first(name: "Content-Type")
        writeReport(code: Int(status.code), received: received, contentType: contentType)
        if failWithBody && status.code >= 400 {
            throw SendFailure.httpStatus(Int(status.code), reason: status.reasonPhrase)
        }
    }

    /// The request's head as `-v` shows it: the request line, `Host`, and the headers the upload sends.
    static func requestHead(
        _ method: HTTPMethod, _ target: String, _ headers: HTTPHeaders, _ body: MultipartBody,
        _ options: HTTPClient.MultipartUploadOptions
    ) -> String {
        let url = URL(string: target)
        let path = (url?.path.isEmpty ?? true ? "/" : url!.path) + (url?.query.map { "?\($0)" } ?? "")
        let defaultPort = url?.scheme?.lowercased() == "https" ? 443 : 80
        let host = (url?.host ?? "") + (url?.port.flatMap { $0 == defaultPort ? nil : ":\($0)" } ?? "")
        var lines = ["\(method.rawValue) \(path) HTTP/1.1", "Host: \(host)"]
        lines += headers.map { "\($0.name): \($0.value)" }
        if let length = options.compression == nil ? body.contentLength : nil {
            lines.append("Content-Length: \(length)")
        } else {
            lines.append("Transfer-Encoding: chunked")
        }
        return lines.map { "> \($0)" }.joined(separator: "\n") + "\n> \n"
    }

    /// Writes `text` to the file at `path`, or to standard output for `-`.
    private static func write(_ text: String, to path: String) throws {
        let sink = try ResponseSink(path: path)
        try sink.write(ByteBuffer(string: text))
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
            timeout: .init(connect: TimeAmount(milliseconds(connectTimeout))))
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.httpVersion = http11 ? .http1Only : .automatic  // automatic: HTTP/2 where ALPN picks it
        configuration.enableInterimResponses()  // the proxy is set per client by ProxyClients
        return configuration
    }

    /// `-x`, else the environment's proxy for `url`, unless `--noproxy` or `no_proxy` names its host.
    private func proxySetting(for url: URL) throws -> ProxySetting? {
        try ProxySetting.forURL(
            url, option: proxy, noProxy: noproxy, environment: ProcessInfo.processInfo.environment)
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

/// `seconds` (0 or more, validated) to the millisecond, at most 1e9 s (31 years): a person may type any number, and
/// NIO's `TimeAmount` holds nanoseconds in an `Int64`.
private func milliseconds(_ seconds: Double) -> Duration {
    .milliseconds(Int64(min(seconds, 1e9) * 1000))
}
