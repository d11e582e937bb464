public import AsyncHTTPClient
public import Foundation
public import NIOHTTP1
public import StreamingMultipart
@_exported public import StreamingMultipartUploadClient

extension HTTPClient {
    /// How `HTTPClient/upload(_:to:method:headers:options:progress:)` sends a form: retries, redirects, timeouts,
    /// compression and `Expect: 100-continue`, each with curl's behaviour as its model.
    ///
    /// ```swift
    /// var options = HTTPClient.MultipartUploadOptions()
    /// options.retry = .init(attempts: 3)          // connection failures, 408, 429 and 5xx; Retry-After honoured
    /// options.timeout = .seconds(30)              // for each attempt, until the response's head
    /// let response = try await client.upload(body, to: "https://example.com/upload", options: options)
    /// ```
    public struct MultipartUploadOptions: Sendable {
        /// Retries after a failed attempt: none by default, as curl without `--retry`.
        public var retry: MultipartRetry = .none
        /// The most redirects followed (curl's `-L` with `--max-redirs`); 0 follows none and returns the redirect.
        ///
        /// 307 and 308 send the same method and the whole body again, re-created from its parts, never buffered;
        /// 301, 302 and 303 answering a POST continue with a GET without a body, as curl and browsers do. A redirect to
        /// another origin (scheme, host or port) drops `Authorization`, `Cookie` and `Proxy-Authorization`, as curl
        /// does, and they stay dropped for the rest of the upload.
        public var maxRedirects: Int = 10
        /// Whether a redirect from `https` to `http` is followed; by default it is not, and the redirect is the answer
        /// (the body and what the request says would otherwise cross the network in the clear).
        public var allowsInsecureRedirects: Bool = false
        /// The most time one attempt may take until the response's head has arrived; nil for no limit.
        public var timeout: Duration? = nil
        /// Sends `Expect: 100-continue` for a body longer than this, or of unknown length (curl's rule, 1 MiB); nil
        /// never sends it. A server that refuses the request (413, 415, 401) can then answer before the body: the
        /// transfer stops as that answer arrives, and the refusal is returned.
        ///
        /// The body waits for `100 Continue` (or the final answer, or ``expectContinueTimeout``) on a client set up
        /// with `HTTPClient.Configuration.enableInterimResponses()`, and none of it is sent before a refusal. On another
        /// client it starts at once, as AsyncHTTPClient sends it, and stops when a final answer of 300 or more arrives:
        /// a few socket buffers of it may then be sent before the refusal.
        public var expectContinueThreshold: Int64? = 1 << 20
        /// How long a body sent with `Expect: 100-continue` waits for the server's `100 Continue` before it starts
        /// anyway (curl's `--expect100-timeout`, 1 s). A final answer of 300 or more that arrives first holds it
        /// for good; none of it is then sent.
        public var expectContinueTimeout: Duration = .seconds(1)
        /// The most times an upload resumes after its connection dropped, sending only the rest of the body
        /// (draft-ietf-httpbis-resumable-upload); 0, the default, offers no resumption.
        ///
        /// Above 0, the upload's request offers resumption (`Upload-Draft-Interop-Version: 6`,
        /// `Upload-Complete: ?1`). A server that takes the offer answers `104 Upload Resumption Supported` with the
        /// upload's location, which a client set up with `HTTPClient.Configuration.enableInterimResponses()` sees.
        /// When the connection then fails (refused, reset, closed, timed out), the upload asks the location how many
        /// bytes arrived (`HEAD`) and sends the rest from there (`PATCH`), up to this many times, telling of each
        /// (``AsyncHTTPClient/HTTPClient/MultipartUploadEvent/resuming(from:attempt:of:)``). It waits 100 ms before
        /// a resumption, doubling to 5 s while the failures repeat, and 100 ms again after an append that sent some
        /// of the rest (a connection that drops every few megabytes still moves on). The append's answer is
        /// the upload's. A server that no longer knows the upload (404, 410) has the whole body sent again, as a
        /// retry. A location on another origin is not followed. A body offers no resumption when compressed (its
        /// offsets would be the compressed stream's), of unknown length (a stream part without one), or one that
        /// cannot be produced again. The bytes appends send that the server does not keep stay within the body's
        /// length: past it the upload fails with `MultipartError.Code.limitExceeded` (a server that reads and refuses
        /// every append draws the body about twice, not `maxResumptions` times).
        public var maxResumptions: Int = 0
        /// The resumable uploads' interop version the upload offers (`Upload-Draft-Interop-Version`): `"8"`, draft
        /// 09, by default; `"6"` for a server of drafts 04 and 05 (swift-nio-extras' `NIOResumableUpload`, which
        /// answers a version it does not speak, 8 among them, with `400`). A `104`
        /// of another version is ignored, as the draft asks: its location would be resumed by another's rules.
        /// Another value offers no resumption.
        public var resumableInteropVersion: String = "8"
        /// Creates the upload without its bytes first (`Upload-Complete: ?0` and its `Upload-Length`, answered
        /// `201 Created` with the location), then sends the body in one append, resumed after a drop as usual:
        /// for a server behind a proxy that cannot pass a `104` on (nginx 1.22; the example server's
        /// `Deploy/nginx-fleet.conf`), where an upload is otherwise not resumable. Default false. Only for a server
        /// known to take resumable uploads: a creation answered other than `201` with a location is the upload's
        /// answer, and a server that does not take them reads the empty request as an empty form. With
        /// `maxResumptions` above 0 and a body of known length, as any resumable upload; the first append counts as
        /// one of the `maxResumptions`.
        public var createsUploadFirst: Bool = false
        /// Compresses the whole body with gzip or deflate and sends `Content-Encoding`; the length is then unknown,
        /// so the body goes chunked.
        public var compression: MultipartBody.Compression? = nil
        /// At most `packetSize` bytes per buffer, then a pause: a bandwidth limit, as curl's `--limit-rate`.
        public var throttle: MultipartBody.Throttle? = nil
        /// The most bytes read into one buffer.
        public var bufferSize: Int = 256 * 1024
        /// The `Cookie` header for each request's URL, asked before every request (the first, each redirect's,
        /// each retry's): a cookie jar scopes its cookies by domain and path per request, as curl's does after `-L`.
        /// When set, it alone decides the header: a `Cookie` in the upload's headers is replaced. Nil (the default)
        /// sends the headers' own `Cookie`, dropped past a change of origin.
        public var cookies: (@Sendable (URL) -> String?)? = nil
        /// The client each request goes through, chosen by its URL and asked before every request (the first, each
        /// redirect's, each retry's and resumption's). AsyncHTTPClient sets its proxy per client: a tool that decides
        /// the proxy per URL, as curl does again after each redirect, gives the client of that URL's proxy. Nil (the
        /// default) sends every request through the client `upload` is called on. An error it throws ends the
        /// upload with that error (a proxy setting that cannot be read, say, for the URL a redirect names).
        ///
        /// ```swift
        /// options.client = { url in url.host == "intranet.example" ? direct : throughProxy }
        /// ```
        public var client: (@Sendable (URL) throws -> HTTPClient)? = nil
        /// Called before each retry and each redirect followed, to tell a user what happens.
        public var onEvent: (@Sendable (HTTPClient.MultipartUploadEvent) -> Void)? = nil

        public init() {}
    }

    /// What an upload does between attempts, for progress displays and logs.
    public enum MultipartUploadEvent: Sendable, Hashable {
        /// Another attempt starts after `delay`: attempt `attempt` (2 for the first retry) of at most `of` (the retries
        /// and the first send; a redirect followed is not an attempt).
        case retrying(attempt: Int, of: Int, delay: Duration, reason: String)
        /// A redirect is followed: the status that asked for it and the next URL.
        case redirecting(status: Int, to: String)
        /// An interim answer (1xx: `100 Continue`, `104 Upload Resumption Supported`) arrived before the final one;
        /// reported on a client set up with `HTTPClient.Configuration.enableInterimResponses()`, for a request that
        /// carries `Expect: 100-continue` or offers resumption, at most 100 times a request (a server may send any
        /// number).
        case interimResponse(HTTPClient.InterimResponse)
        /// The connection dropped after the server announced resumption: the upload sends the rest of the body from
        /// byte `from` (what the server has), resumption `attempt` of at most `of`.
        case resuming(from: Int64, attempt: Int, of: Int)
        /// The server no longer knew the upload it had announced (it restarted, or the upload's window passed): the
        /// body goes again from its start, once, whatever the retry policy.
        case startingOver
    }

    /// The head of an interim answer (1xx), as the server sent it.
    public struct InterimResponse: Sendable, Hashable {
        /// `100 Continue`, `102 Processing`, `103 Early Hints`.
        public var status: HTTPResponseStatus
        /// Its headers, in order (`Link` for early hints; usually none).
        public var headers: HTTPHeaders
        /// The protocol it came over: HTTP/1.1, or HTTP/2 (on the request's stream).
        public var version: HTTPVersion

        public init(status: HTTPResponseStatus, headers: HTTPHeaders = [:], version: HTTPVersion = .http1_1) {
            self.status = status
            self.headers = headers
            self.version = version
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(status)
            hasher.combine(version.major)
            hasher.combine(headers.count)  // NIO's header equality ignores order and the names' case
        }
    }
}
