import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import StreamingMultipart
import StreamingMultipartNIO

extension HTTPClient {
    /// Sends the rest of an upload whose connection failed after the server announced resumption at `location`
    /// (`ResumableUpload` says how): asks the offset, sends the body from there; again after a 409 (the offset was
    /// stale) or another transient failure, up to `options.maxResumptions` times in all, each after a pause of 100 ms
    /// doubling to at most 5 s.
    ///
    /// - Returns: the append's answer, the upload's; nil when the server no longer knows the upload (404, 410), or
    ///   the body cannot be produced from the offset: the caller sends the whole body again, as a retry.
    /// - Throws: the last transient failure when the resumptions are spent; any other error at once.
    func resume(
        _ body: MultipartBody, at location: URL, headers: HTTPHeaders, options: HTTPClient.MultipartUploadOptions,
        progress: (@Sendable (MultipartBody.Progress) -> Void)?, after failure: any Error
    ) async throws -> HTTPClientResponse? {
        guard options.maxResumptions > 0, let length = body.contentLength, body.isReproducible else { return nil }
        var kept = headers  // the caller's, credentials included (same origin), without the body's own
        for name in UploadPlan.bodyHeaders + ResumableUpload.creationHeaders.map(\.0) { kept.remove(name: name) }
        var failure = failure
        for attempt in 1...options.maxResumptions {
            // 100 ms, doubling to at most 5 s: the network that dropped the connection may need a moment.
            try await _Concurrency.Task.sleep(for: min(Duration.milliseconds(100 << min(attempt - 1, 6)), .seconds(5)))
            do {
                var ask = HTTPClientRequest(url: location.absoluteString)
                ask.method = .HEAD
                ask.headers = kept
                ask.headers.add(contentsOf: ResumableUpload.offsetRequestHeaders)
                let answer = try await execute(ask, deadline: Self.deadline(options))
                guard answer.status == .noContent || answer.status == .ok,
                    let offset = ResumableUpload.offset(answer.headers.first(name: "Upload-Offset")), offset <= length
                else { return nil }
                options.onEvent?(.resuming(from: offset, attempt: attempt, of: options.maxResumptions))
                var append = HTTPClientRequest(url: location.absoluteString)
                append.method = .PATCH
                append.headers = kept
                append.headers.add(contentsOf: ResumableUpload.appendHeaders(offset: offset))
                append.body = .stream(
                    body.byteBuffers(
                        startingAt: offset, size: options.bufferSize, throttle: options.throttle, progress: progress),
                    length: .known(length - offset))
                let response = try await execute(append, deadline: Self.deadline(options))
                guard response.status == .conflict else { return response }
                _ = try? await response.body.collect(upTo: 1 << 20)  // stale: ask again
            } catch let error where UploadPlan.transientReason(error) != nil {
                failure = error
            }
        }
        throw failure
    }
}
