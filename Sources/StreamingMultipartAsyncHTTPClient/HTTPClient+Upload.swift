public import AsyncHTTPClient
import Foundation
import NIOCore
public import NIOHTTP1
public import StreamingMultipart
import StreamingMultipartUploadClient

extension HTTPClient {
    /// Sends a form and returns the response, following redirects and retrying as curl's `-L --retry` would,
    /// with the body re-created for every send and never buffered.
    ///
    /// ```swift
    /// import AsyncHTTPClient
    /// import StreamingMultipart
    /// import StreamingMultipartAsyncHTTPClient
    ///
    /// var body = MultipartBody()
    /// try body.append(.text("Sunset over the bay", name: "caption"))
    /// try body.append(.file(at: photoURL, name: "photo"))
    ///
    /// var options = HTTPClient.MultipartUploadOptions()
    /// options.retry = .init(attempts: 3)
    /// let response = try await HTTPClient.shared.upload(body, to: "https://example.com/upload", options: options) {
    ///     print("\($0.completedBytes) of \($0.totalBytes ?? -1) bytes")
    /// }
    /// let answer = try await response.body.collect(upTo: 1 << 20)
    /// ```
    ///
    /// The request carries `Content-Type` with the body's boundary and `Content-Length` whenever the body's length is
    /// known (chunked otherwise, and always when compressed), and `Expect: 100-continue` past
    /// ``AsyncHTTPClient/HTTPClient/MultipartUploadOptions/expectContinueThreshold``. On a client set up with
    /// `HTTPClient.Configuration.enableInterimResponses()` such a body waits for `100 Continue`, as curl's does, up
    /// to ``AsyncHTTPClient/HTTPClient/MultipartUploadOptions/expectContinueTimeout``. A response of 300 or more
    /// that arrives while the body is being sent, or held, stops the transfer.
    ///
    /// Between attempts (``AsyncHTTPClient/HTTPClient/MultipartUploadOptions``):
    /// - 307 and 308 send the same request with the whole body again, produced anew from its parts; 301 and 302
    ///   answering a POST, and 303, continue with a GET without a body. At most
    ///   ``AsyncHTTPClient/HTTPClient/MultipartUploadOptions/maxRedirects``. A redirect to another scheme, host or port drops `Authorization`,
    ///   `Cookie` and `Proxy-Authorization`; one from `https` to `http` is not followed (the redirect is the answer)
    ///   unless ``AsyncHTTPClient/HTTPClient/MultipartUploadOptions/allowsInsecureRedirects``. The URLSession upload follows the same table.
    /// - A connection refused, reset or closed before the answer, a timeout, and the answers 408, 429 and 5xx (but
    ///   501 and 505) are tried again `MultipartRetry.attempts` times, after `Retry-After` when the
    ///   answer has one, else after the backoff. The last answer is returned; the last error is thrown.
    /// - A body that cannot be produced again (one holding a ready-made `InputStream`:
    ///   `MultipartBody.isReproducible`) is sent once: a 307 or 308 is then returned as it
    ///   came, and nothing is retried.
    ///
    /// The responses in between are read and dropped (at most 1 MiB of each). Give it a client that follows no
    /// redirect itself (`HTTPClient.Configuration(redirectConfiguration: .disallow)`): one that does follows a
    /// redirect without a body on its own and takes a loop for a cycle (`redirectCycleDetected`). A client whose
    /// `connectionPool.retryConnectionEstablishment` is true (AsyncHTTPClient's default) keeps trying to connect until
    /// ``AsyncHTTPClient/HTTPClient/MultipartUploadOptions/timeout``; set it false to have a refused connection fail, or be retried, at once.
    ///
    /// - Parameters:
    ///   - body: the form.
    ///   - url: where to send it: `http` or `https`.
    ///   - method: POST unless given.
    ///   - headers: more request headers; `Content-Type` (and `Content-Encoding` when compressing) are set here.
    ///   - options: retries, redirects, timeout, compression.
    ///   - progress: called after each buffer of the body is produced; a new attempt starts again from 0.
    /// - Returns: the last response, its body not yet read.
    /// - Throws: the last attempt's error: AsyncHTTPClient's (`HTTPClientError`, a connection error), the body's
    ///   `MultipartError` (a file changed, a stream of the wrong length), `CancellationError`.
    public func upload(
        _ body: MultipartBody, to url: String, method: HTTPMethod = .POST, headers: HTTPHeaders = [:],
        options: HTTPClient.MultipartUploadOptions = HTTPClient.MultipartUploadOptions(),
        progress: (@Sendable (MultipartBody.Progress) -> Void)? = nil
    ) async throws -> HTTPClientResponse {
        guard let start = URL(string: url), ["http", "https"].contains(start.scheme?.lowercased()) else {
            throw HTTPClientError.invalidURL
        }
        var plan = UploadPlan(
            url: start, method: method, headers: Self.uploadHeaders(headers, for: body, options: options),
            bodyIsReproducible: body.isReproducible, options: options)
        var startedOver = false
        var wasted: Int64 = 0  // the bytes appends sent that the server did not keep, bounded by the body's length
        if options.createsUploadFirst, plan.httpHeaders.contains(name: "Upload-Draft-Interop-Version") {
            switch try await createFirst(body, plan: plan, options: options, wasted: &wasted, progress: progress) {
            case .answered(let response):
                return response
            case .forgotten:
                // Forgotten before the body was in: it goes whole, as any upload, once.
                startedOver = true
                options.onEvent?(.startingOver)
            case .notResumed:
                break  // the body goes whole, on the retry policy
            }
        }
        while true {
            try _Concurrency.Task.checkCancellation()
            var request = Self.request(plan, options: options)
            // Chosen before the attempt: a client that cannot be had (its proxy setting unreadable) ends the upload.
            let client = try options.client?(plan.url) ?? self
            let gate = plan.sendsBody ? Self.gate(for: request.headers, options: options) : nil
            if let gate { request.headers.add(name: ContinueGates.attemptHeader, value: gate.token) }
            if plan.sendsBody {
                let holds = ContinueGate.holdsBody(request.headers)
                request.body = body.httpClientRequestBody(
                    size: options.bufferSize, compression: options.compression, throttle: options.throttle,
                    progress: progress, heldBy: gate.flatMap { holds ? ($0.gate, options.expectContinueTimeout) : nil })
            }
            let response: HTTPClientResponse
            do {
                defer { gate.map { ContinueGates.shared.remove($0.token) } }
                response = try await client.execute(request, deadline: Self.deadline(options))
            } catch {
                let announced = gate?.gate.resumeLocation
                var resumption = Resumption.notResumed
                if let location = ResumableUpload.resumeURL(location: announced, upload: plan.url),
                    UploadPlan.transientReason(error) != nil
                {
                    resumption = try await resume(
                        body, at: location, headers: plan.httpHeaders, options: options, wasted: &wasted,
                        progress: progress)
                }
                switch resumption {
                case .answered(let resumed):
                    response = resumed
                case .forgotten where !startedOver:
                    // The server restarted (or the upload's window passed): the body goes again from its start, once,
                    // whatever the retry policy, as the draft asks of a client told 404.
                    startedOver = true
                    options.onEvent?(.startingOver)
                    continue
                case .forgotten, .notResumed:
                    guard case .retry(let delay, let reason)? = plan.next(afterError: error) else { throw error }
                    try await Self.wait(delay, reason: reason, plan: plan, options: options)
                    continue
                }
            }
            switch plan.next(afterStatus: Int(response.status.code), headers: response.headers) {
            case .finish:
                return response
            case .redirectLimitReached:
                await Self.discard(response)
                throw HTTPClientError.redirectLimitReached  // as AsyncHTTPClient's own redirects do
            case .retry(let delay, let reason):
                await Self.discard(response)
                try await Self.wait(delay, reason: reason, plan: plan, options: options)
            case .redirect(let status):
                await Self.discard(response)
                options.onEvent?(.redirecting(status: status, to: plan.url.absoluteString))
            }
        }
    }

    /// ``MultipartUploadOptions/createsUploadFirst``: creates the upload without its bytes, then sends the body in
    /// one append from byte 0, resumed after a drop as any announced upload is. A creation answered other than
    /// `201 Created` with a location on the upload's origin is the upload's answer.
    private func createFirst(
        _ body: MultipartBody, plan: UploadPlan, options: HTTPClient.MultipartUploadOptions, wasted: inout Int64,
        progress: (@Sendable (MultipartBody.Progress) -> Void)?
    ) async throws -> Resumption {
        guard let length = body.contentLength else { return .notResumed }
        var create = Self.request(plan, options: options)
        create.headers.remove(name: "Expect")  // no body to hold
        for (name, value) in ResumableUpload.emptyCreationHeaders(
            length: length, version: options.resumableInteropVersion)
        {
            create.headers.replaceOrAdd(name: name, value: value)
        }
        create.body = .bytes(ByteBuffer())  // Content-Length: 0
        let client = try options.client?(plan.url) ?? self
        let answer = try await client.execute(create, deadline: Self.deadline(options))
        guard answer.status == .created,
            let location = ResumableUpload.resumeURL(location: answer.headers.first(name: "Location"), upload: plan.url)
        else { return .answered(answer) }
        await Self.discard(answer)
        return try await resume(
            body, at: location, headers: plan.httpHeaders, options: options, wasted: &wasted, progress: progress,
            from: 0)
    }

    /// The plan's request as it stands (its URL, method and headers), with the cookies for its URL.
    private static func request(_ plan: UploadPlan, options: HTTPClient.MultipartUploadOptions) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: plan.url.absoluteString)
        request.method = plan.httpMethod
        request.headers = plan.httpHeaders
        if let cookies = options.cookies {
            request.headers.remove(name: "Cookie")
            if let value = cookies(plan.url) { request.headers.add(name: "Cookie", value: value) }
        }
        return request
    }

    /// Tells of the retry, then sleeps (cancellable).
    private static func wait(
        _ delay: Duration, reason: String, plan: UploadPlan, options: HTTPClient.MultipartUploadOptions
    ) async throws {
        let attempts = options.retry.attempts + 1
        options.onEvent?(.retrying(attempt: plan.retriesUsed + 1, of: attempts, delay: delay, reason: reason))
        try await _Concurrency.Task.sleep(for: delay)
    }

    /// The caller's headers with the body's: `Content-Type`, `Content-Encoding`, and `Expect` when due.
    package static func uploadHeaders(
        _ given: HTTPHeaders, for body: MultipartBody, options: HTTPClient.MultipartUploadOptions
    )
        -> HTTPHeaders
    {
        var headers = given
        headers.replaceOrAdd(name: "Content-Type", value: body.contentType)
        headers.remove(name: "Content-Length")  // AsyncHTTPClient sets it from the body's length
        if let compression = options.compression {
            headers.replaceOrAdd(name: "Content-Encoding", value: compression.contentEncoding)
        }
        let length = options.compression == nil ? body.contentLength : nil
        if let threshold = options.expectContinueThreshold, length.map({ $0 > threshold }) ?? true,
            !headers.contains(name: "Expect")
        {
            headers.add(name: "Expect", value: "100-continue")
        }
        if options.maxResumptions > 0, length != nil, body.isReproducible,
            ResumableUpload.clientVersions.contains(options.resumableInteropVersion)
        {
            for (name, value) in ResumableUpload.creationHeaders(version: options.resumableInteropVersion) {
                headers.replaceOrAdd(name: name, value: value)
            }
        }
        return headers
    }

    /// A gate for a request that says `Expect: 100-continue` or offers resumption, registered under a token of its
    /// own for the connection's observer to find (`HTTPClient.Configuration.enableInterimResponses()`); nil for
    /// another request.
    private static func gate(
        for headers: HTTPHeaders, options: HTTPClient.MultipartUploadOptions
    ) -> (gate: ContinueGate, token: String)? {
        guard ContinueGate.isWatched(headers) else { return nil }
        let onEvent = options.onEvent
        let gate = ContinueGate(interopVersion: options.resumableInteropVersion) { head in
            onEvent?(
                .interimResponse(
                    HTTPClient.InterimResponse(status: head.status, headers: head.headers, version: head.version)))
        }
        return (gate, ContinueGates.shared.register(gate))
    }

    /// When an attempt must have its head: now plus the options' timeout.
    static func deadline(_ options: HTTPClient.MultipartUploadOptions) -> NIODeadline {
        options.timeout.map { NIODeadline.now() + TimeAmount($0) } ?? .distantFuture
    }

    /// Reads a response no one will see, up to 1 MiB, so that its connection can serve the next attempt.
    private static func discard(_ response: HTTPClientResponse) async {
        var left = 1 << 20
        do {
            for try await buffer in response.body {
                left -= buffer.readableBytes
                if left < 0 { break }
            }
        } catch {}  // the answer is dropped either way
    }
}
