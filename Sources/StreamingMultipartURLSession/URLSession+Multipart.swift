public import Foundation
public import StreamingMultipart

#if canImport(FoundationNetworking)
public import FoundationNetworking
import StreamingMultipartUploadClient
#endif

extension URLSession {
    /// Uploads a form the way that works on this platform and returns the answer: an exact `Content-Length`
    /// everywhere, progress, and the whole body again after a 307 or 308 redirect.
    ///
    /// ```swift
    /// var request = URLRequest(url: endpoint)
    /// request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
    /// let (data, response) = try await URLSession.shared.upload(body, for: request) { progress in
    ///     print("\(progress.completedBytes) of \(progress.totalBytes ?? -1) bytes")
    /// }
    /// ```
    ///
    /// - On Linux, URLSession sends a stream body chunked (and a `Content-Length` beside it makes a request servers
    ///   refuse), so the body is written to a temporary file in `temporaryDirectory` (by
    ///   `MultipartBody.write(to:permissions:compression:)`, which copies file parts inside the
    ///   kernel) and sent with `upload(for:fromFile:)`; the file is removed when the call returns or throws,
    ///   cancelled or not. The upload needs room for one copy of the body there.
    /// - On Apple platforms the body streams with its `Content-Length`: nothing is written to disk.
    /// - Redirects are followed here, not by URLSession, up to 10 (then `URLError(.httpTooManyRedirects)`), by the
    ///   table the AsyncHTTPClient upload follows too, curl's `-L` as the model: 307 and 308 send the request with
    ///   its whole body again to the new URL; 301 and 302 answering a POST, and 303, continue with a GET without
    ///   the body. A redirect to another scheme, host or port drops `Authorization`, `Cookie` and
    ///   `Proxy-Authorization` (the request's, and those of the configuration's `httpAdditionalHeaders`) for the
    ///   rest of the upload; one from `https` to `http` is not followed: the redirect is the answer.
    /// - With `retry`, a connection refused, lost or timed out and the answers 408, 429 and 5xx (but 501 and 505)
    ///   are tried again, after `Retry-After` when the answer has one, else after the backoff; the last answer is
    ///   returned, the last error thrown. On Apple platforms a body that cannot be produced again (one holding a
    ///   ready-made `InputStream`) is sent once: it is not retried, and a 307 or 308 is returned as it came.
    ///
    /// The upload runs in a session made from this session's `configuration` (its headers, timeouts, cookie and
    /// credential storage), with a delegate of its own. A request whose method is GET (`URLRequest`'s default) is
    /// sent as POST. `Content-Type` (with the boundary),
    /// `Content-Length` and, with `compression`, `Content-Encoding` are set here.
    ///
    /// - Parameters:
    ///   - body: the form.
    ///   - request: the URL, method and any other headers.
    ///   - compression: compresses the whole body (the `Content-Length` is then the compressed one on Linux, and
    ///     absent on Apple platforms).
    ///   - retry: how often to try again; none by default, as curl without `--retry`.
    ///   - temporaryDirectory: where the body file goes on Linux; the system's temporary folder by default.
    ///   - progress: URLSession's count of body bytes sent, with the total when known.
    /// - Returns: the response body and the response, as `data(for:)` returns them.
    /// - Throws: what `write(to:)` throws while writing the body file (a part's file changed, no room left), and
    ///   what URLSession throws (`URLError`).
    public func upload(
        _ body: MultipartBody, for request: URLRequest, compression: MultipartBody.Compression? = nil,
        retry: MultipartRetry = .none, temporaryDirectory: URL? = nil,
        progress: (@Sendable (MultipartBody.Progress) -> Void)? = nil
    ) async throws -> (Data, URLResponse) {
        var request = request
        if request.httpMethod == nil || request.httpMethod == "GET" { request.httpMethod = "POST" }
        let delegate = MultipartUploadDelegate(body: body, compression: compression, progress: progress)
        #if canImport(FoundationNetworking)
        let folder = temporaryDirectory ?? FileManager.default.temporaryDirectory
        let file = folder.appendingPathComponent("multipart-upload-\(UUID().uuidString).body")
        defer { try? FileManager.default.removeItem(at: file) }
        try request.setMultipartBody(body, writingTo: file, compression: compression)
        #else
        request.setMultipartBody(body, compression: compression)
        #endif
        // A session of this one's configuration, the delegate both the session's (swift-corelibs-foundation asks
        // only a session delegate about redirects) and the task's (it tells only a task delegate of bytes sent).
        let session = URLSession(
            configuration: Self.credentialsMoved(from: configuration, into: &request), delegate: delegate,
            delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        // On Linux the body file is sent again; on Apple platforms the stream is produced again from the parts.
        #if canImport(FoundationNetworking)
        let canSendAgain = true
        #else
        let canSendAgain = body.isReproducible
        #endif
        var plan = UploadPlan(
            url: request.url ?? URL(fileURLWithPath: "/"), method: request.httpMethod ?? "POST",
            headers: (request.allHTTPHeaderFields ?? [:]).map { ($0.key, $0.value) }, bodyIsReproducible: canSendAgain,
            retry: retry, maxRedirects: Self.maxMultipartRedirects)
        while true {
            try Task.checkCancellation()
            var attempt = request  // its timeout, cache and cellular settings kept
            attempt.url = plan.url
            attempt.httpMethod = plan.method
            attempt.allHTTPHeaderFields = Dictionary(plan.headers, uniquingKeysWith: { first, _ in first })
            let data: Data
            let response: URLResponse
            do {
                if !plan.sendsBody {
                    attempt.httpBodyStream = nil
                    (data, response) = try await session.data(for: attempt, delegate: delegate)
                } else {
                    #if canImport(FoundationNetworking)
                    (data, response) = try await session.upload(for: attempt, fromFile: file, delegate: delegate)
                    #else
                    attempt.httpBodyStream = body.makeInputStream(compression: compression)
                    (data, response) = try await session.data(for: attempt, delegate: delegate)
                    #endif
                }
            } catch let error as URLError {
                let reason = Self.isTransient(error) ? "\(error.code)" : nil
                guard error.code != .cancelled,
                    case .retry(let delay, _)? = plan.next(afterFailure: reason, description: "\(error.code)")
                else { throw error }
                try await Task.sleep(for: delay)
                continue
            }
            guard let http = response as? HTTPURLResponse else { return (data, response) }
            // Every redirect comes back here (the delegate stops URLSession from following any), so that the one
            // table decides it.
            switch plan.next(afterStatus: http.statusCode, header: { http.value(forHTTPHeaderField: $0) }) {
            case .finish: return (data, response)
            case .retry(let delay, _): try await Task.sleep(for: delay)
            case .redirect: continue
            case .redirectLimitReached: throw URLError(.httpTooManyRedirects)
            }
        }
    }

    /// A copy of `configuration` whose extra headers carry no credentials: those move into `request` (where the
    /// request has none of its own), so that the redirect table drops them at a change of origin as it drops the
    /// request's own.
    static func credentialsMoved(
        from configuration: URLSessionConfiguration, into request: inout URLRequest
    ) -> URLSessionConfiguration {
        let copy = (configuration.copy() as? URLSessionConfiguration) ?? configuration
        guard var extra = copy.httpAdditionalHeaders else { return copy }
        for (key, value) in extra {
            guard let name = key as? String, let value = value as? String,
                UploadPlan.credentialHeaders.contains(where: { $0.caseInsensitiveCompare(name) == .orderedSame })
            else { continue }
            extra[key] = nil
            if request.value(forHTTPHeaderField: name) == nil { request.setValue(value, forHTTPHeaderField: name) }
        }
        copy.httpAdditionalHeaders = extra
        return copy
    }

    /// Whether a failed attempt is worth another: the connection was refused, lost or timed out.
    static func isTransient(_ error: URLError) -> Bool {
        [.cannotConnectToHost, .networkConnectionLost, .timedOut].contains(error.code)
    }

    /// The most redirects ``upload(_:for:compression:retry:temporaryDirectory:progress:)`` follows.
    static let maxMultipartRedirects = 10
}

/// The session delegate of ``Foundation/URLSession/upload(_:for:compression:retry:temporaryDirectory:progress:)``: progress
/// from URLSession's count of bytes sent, and a new body stream when a redirect asks for one.
final class MultipartUploadDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    let body: MultipartBody
    let compression: MultipartBody.Compression?
    let progress: (@Sendable (MultipartBody.Progress) -> Void)?

    init(
        body: MultipartBody, compression: MultipartBody.Compression?,
        progress: (@Sendable (MultipartBody.Progress) -> Void)?
    ) {
        self.body = body
        self.compression = compression
        self.progress = progress
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        let total = totalBytesExpectedToSend > 0 ? totalBytesExpectedToSend : nil
        progress?(MultipartBody.Progress(completedBytes: totalBytesSent, totalBytes: total, partIndex: nil))
    }

    /// Follows no redirect: each returns to the upload, whose plan decides the next request (URLSession would
    /// copy every header, credentials included, to any host, and on Linux never completes a 301, 302 or 303 of an
    /// upload from a file).
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    /// A new stream of the body, or none for a body that cannot be produced again (URLSession then fails the task
    /// rather than send a stream already read).
    func urlSession(
        _ session: URLSession, task: URLSessionTask,
        needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        completionHandler(body.isReproducible ? body.makeInputStream(compression: compression) : nil)
    }

    #if canImport(Darwin)
    /// The rest of the body from `offset`, when URLSession resumes the upload against a server that supports
    /// resumable uploads (draft-ietf-httpbis-resumable-upload); none for a compressed body (its offsets are the
    /// compressed stream's) or one that cannot be produced again, and URLSession then fails the task.
    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
    func urlSession(
        _ session: URLSession, task: URLSessionTask, needNewBodyStreamFrom offset: Int64,
        completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        guard body.isReproducible, compression == nil else { return completionHandler(nil) }
        completionHandler(try? body.makeInputStream(startingAt: offset))
    }
    #endif
}
