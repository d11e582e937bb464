import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import StreamingMultipart
import StreamingMultipartNIO
import StreamingMultipartUploadClient

extension HTTPClient {
    /// Sends the rest of an upload whose connection failed after the server announced resumption at `location`
    /// (`ResumableUpload` says how): asks the offset, sends the body from there; again after a 409 (the offset was
    /// stale) or another transient failure, up to `options.maxResumptions` times in all, on the one retry policy
    /// (`MultipartRetry`: 100 ms between tries, doubling to at most 5 s; an append that sent bytes before it failed
    /// starts the wait again at 100 ms, so a connection cut every few megabytes costs 100 ms a cut, not 5 s).
    ///
    /// - Returns: the append's answer, the upload's; ``Resumption/forgotten`` when the server no longer knows the
    ///   upload (404, 410: it restarted, or the upload's window passed); ``Resumption/notResumed`` when it still
    ///   disagrees on the offset after the last try, or the body cannot be produced from an offset.
    ///
    /// The bytes appends send that the server does not keep (`wasted`, counted across the upload's resumptions) stay
    /// within the body's length: an append the server answered 409, or one cut without moving the offset, wasted
    /// what it sent. A server that reads every append and answers 409 (3 MB body: 30 MB in 21 s before this bound)
    /// ends the upload with `MultipartError.Code.limitExceeded` after about twice the body; an append cut after
    /// some progress counts nothing (what the kernel had buffered when the connection dropped cannot be told), so
    /// `maxResumptions` bounds those.
    /// - Throws: the last transient failure when the resumptions are spent; `MultipartError` when the appends would
    ///   re-send more than the body; any other error at once.
    ///
    /// With `known`, the first append goes from that offset without asking, and tells no resumption: the body's
    /// first append after a creation without bytes (``MultipartUploadOptions/createsUploadFirst``).
    func resume(
        _ body: MultipartBody, at location: URL, headers: HTTPHeaders, options: HTTPClient.MultipartUploadOptions,
        wasted: inout Int64, progress: (@Sendable (MultipartBody.Progress) -> Void)?, from known: Int64? = nil
    ) async throws -> Resumption {
        guard options.maxResumptions > 0, let length = body.contentLength, body.isReproducible else {
            return .notResumed
        }
        var kept = headers  // the caller's, credentials included (same origin), without the body's own
        for name in UploadPlan.bodyHeaders + ResumableUpload.creationFieldNames { kept.remove(name: name) }
        let retry = MultipartRetry(
            attempts: options.maxResumptions - 1, initialDelay: .milliseconds(100), maxDelay: .seconds(5))
        var attempt = 0
        var waste = wasted
        defer { wasted = waste }
        // The last append: its attempt, its offset, how far its body was produced, whether the server answered it.
        var lastAppend: (attempt: Int, from: Int64, reached: NIOLockedValueBox<Int64>, refused: Bool)?
        do {
            let worthAnotherTry = { (error: any Error) in
                error is StaleOffset || UploadPlan.transientReason(error) != nil
            }
            let appendSentBytes = {
                guard let last = lastAppend, last.attempt == attempt else { return false }
                return last.reached.withLockedValue { $0 } > last.from
            }
            return try await retry.run(retryingWhen: worthAnotherTry, madeProgress: appendSentBytes) {
                () async throws -> Resumption in
                attempt += 1
                let client = try options.client?(location) ?? self
                let offset: Int64
                if attempt == 1, let known {
                    offset = known
                } else {
                    var ask = HTTPClientRequest(url: location.absoluteString)
                    ask.method = .HEAD
                    ask.headers = kept
                    ask.headers.add(
                        contentsOf: ResumableUpload.offsetRequestHeaders(version: options.resumableInteropVersion))
                    let answer = try await client.execute(ask, deadline: Self.deadline(options))
                    if answer.status == .notFound || answer.status == .gone { return .forgotten }
                    guard answer.status == .noContent || answer.status == .ok,
                        let asked = ResumableUpload.offset(answer.headers.first(name: "Upload-Offset")),
                        asked <= length
                    else { return .notResumed }
                    offset = asked
                }
                if let last = lastAppend, last.refused || offset == last.from {
                    waste += max(0, last.reached.withLockedValue { $0 } - offset)
                }
                guard waste <= length else {
                    throw MultipartError(
                        code: .limitExceeded,
                        message: "the appends sent \(waste) bytes the server did not keep, more than the body's "
                            + "\(length): the upload is given up at byte \(offset)")
                }
                let reached = NIOLockedValueBox(offset)
                lastAppend = (attempt, offset, reached, false)
                if attempt > 1 || known == nil {
                    options.onEvent?(.resuming(from: offset, attempt: attempt, of: options.maxResumptions))
                }
                var append = HTTPClientRequest(url: location.absoluteString)
                append.method = .PATCH
                append.headers = kept
                append.headers.add(
                    contentsOf: ResumableUpload.appendHeaders(offset: offset, version: options.resumableInteropVersion))
                append.body = .stream(
                    body.byteBuffers(
                        startingAt: offset, size: options.bufferSize, throttle: options.throttle,
                        progress: { done in
                            reached.withLockedValue { $0 = max($0, done.completedBytes) }
                            progress?(done)
                        }),
                    length: .known(length - offset))
                let response = try await client.execute(append, deadline: Self.deadline(options))
                guard response.status == .conflict else { return .answered(response) }
                lastAppend?.refused = true
                _ = try? await response.body.collect(upTo: 1 << 20)
                throw StaleOffset()  // ask again
            }
        } catch is StaleOffset {
            return .notResumed
        }
    }

    /// How a resumption ended.
    enum Resumption {
        /// The append's answer: the upload's.
        case answered(HTTPClientResponse)
        /// The server no longer knows the upload: it can only be sent again from its start.
        case forgotten
        /// No resumption: the caller goes on as after any failure (a retry, if the policy allows one).
        case notResumed
    }

    /// A 409 to an append: the server's offset moved since it was asked.
    private struct StaleOffset: Error {}
}
