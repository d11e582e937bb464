public import Foundation
public import StreamingMultipart

#if canImport(FoundationNetworking)
public import FoundationNetworking
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
    ///   ``MultipartBody/write(to:permissions:compression:)``, which copies file parts inside the
    ///   kernel) and sent with `upload(for:fromFile:)`; the file is removed when the call returns or throws,
    ///   cancelled or not. The upload needs room for one copy of the body there.
    /// - On Apple platforms the body streams with its `Content-Length`: nothing is written to disk.
    /// - A 307 or 308 is followed here, up to 10 times, by sending the request with its whole body to the new URL
    ///   (URLSession would resend it without the body); a redirect to another origin drops `Authorization`. 301,
    ///   302 and 303 are URLSession's to follow, as a GET without the body.
    /// - With `retry`, a connection refused, lost or timed out and the answers 408, 429 and 5xx (but 501 and 505)
    ///   are tried again, after `Retry-After` when the answer has one, else after the backoff; the last answer is
    ///   returned, the last error thrown. On Apple platforms a body that cannot be produced again (one holding a
    ///   ready-made `InputStream`) is sent once: nothing is retried, and a 307 or 308 is returned as it came.
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
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        // On Linux the body file is sent again; on Apple platforms the stream is produced again from the parts.
        #if canImport(FoundationNetworking)
        let canSendAgain = true
        #else
        let canSendAgain = body.isReproducible
        #endif
        var redirects = 0
        var retries = 0
        while true {
            try Task.checkCancellation()
            let data: Data
            let response: URLResponse
            do {
                #if canImport(FoundationNetworking)
                (data, response) = try await session.upload(for: request, fromFile: file, delegate: delegate)
                #else
                request.httpBodyStream = body.makeInputStream(compression: compression)
                (data, response) = try await session.data(for: request, delegate: delegate)
                #endif
            } catch let error as URLError where Self.isTransient(error) && canSendAgain {
                guard let delay = retry.backoff(afterRetries: retries) else { throw error }
                retries += 1
                try await Task.sleep(for: delay)
                continue
            }
            guard let http = response as? HTTPURLResponse, canSendAgain else { return (data, response) }
            if MultipartRetry.isTransient(status: http.statusCode), let backoff = retry.backoff(afterRetries: retries) {
                retries += 1
                let retryAfter = http.value(forHTTPHeaderField: "Retry-After")
                try await Task.sleep(for: retry.delay(retryAfter: retryAfter, backoff: backoff))
                continue
            }
            // 307 and 308 come back here (the delegate stops URLSession, which would resend without the body):
            // the same request goes to the new URL, its body produced again.
            guard http.statusCode == 307 || http.statusCode == 308, redirects < Self.maxMultipartRedirects,
                let location = http.value(forHTTPHeaderField: "Location"),
                let next = URL(string: location, relativeTo: request.url)?.absoluteURL,
                next.scheme == "http" || next.scheme == "https"
            else { return (data, response) }
            redirects += 1
            if next.host != request.url?.host || next.port != request.url?.port || next.scheme != request.url?.scheme {
                request.setValue(nil, forHTTPHeaderField: "Authorization")  // as URLSession and curl do
            }
            request.url = next
        }
    }

    /// Whether a failed attempt is worth another: the connection was refused, lost or timed out.
    static func isTransient(_ error: URLError) -> Bool {
        [.cannotConnectToHost, .networkConnectionLost, .timedOut].contains(error.code)
    }

    /// The most 307 and 308 redirects ``upload(_:for:compression:retry:temporaryDirectory:progress:)`` follows.
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

    /// Lets URLSession follow 301, 302 and 303 (a GET without the body); 307 and 308 return to the upload, which
    /// sends the body again itself.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(response.statusCode == 307 || response.statusCode == 308 ? nil : request)
    }

    /// A new stream of the body, or none for a body that cannot be produced again (URLSession then fails the task
    /// rather than send a stream already read).
    func urlSession(
        _ session: URLSession, task: URLSessionTask,
        needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        completionHandler(body.isReproducible ? body.makeInputStream(compression: compression) : nil)
    }
}
