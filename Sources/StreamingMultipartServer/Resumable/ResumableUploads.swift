import Foundation
import NIOConcurrencyHelpers
package import NIOHTTP1
import StreamingMultipart
import StreamingMultipartUploadClient

/// Resumable uploads (draft-ietf-httpbis-resumable-upload, interop versions 3, 5, 6 and 8: drafts 01, 03, 04–05 and
/// 09) for a NIO server's upload
/// routes: a client whose connection drops sends only the rest of its body, and the route reads one body that paused
/// while the client reconnected. Nothing is parsed, hashed or stored twice; limits count the body's bytes once.
///
/// On Hummingbird it is one argument of the server (StreamingMultipartHummingbird):
///
/// ```swift
/// let app = Application(router: router, server: .guardedHTTP1(resumableUploads: ResumableUploads()))
/// ```
///
/// What a client sees:
///
/// 1. A `POST` or `PUT` that offers resumption (`Upload-Draft-Interop-Version` and `Upload-Complete`) gets
///    `104 Upload Resumption Supported` at once, before any `100 Continue`, with the upload's `Location`:
///    ``resourcePrefix`` and 128 random bits in hex (after ``Configuration/node`` and `-` when it is set),
///    unguessable and bound to that upload alone; and its limits
///    (`Upload-Limit`). One that says `Upload-Complete: ?0` sends only the first piece: it is answered
///    `201 Created` with the location once that piece is in, and the route reads on from the appends.
/// 2. After a drop, `HEAD` on the location answers `204` with `Upload-Offset`: the bytes the server has. It also cuts
///    off the request that was still sending, so that the offset stays put.
/// 3. `PATCH` on the location from that offset sends the rest; its answer is the route's answer to the form. An append
///    from another offset gets `409` with the right `Upload-Offset`, and the upload is kept. `DELETE` ends the upload.
///
/// The upload's state lives in this process: behind a load balancer, give each server a ``Configuration/node`` name
/// and route `resourcePrefix` paths by it to the server that announced them, answering `404` for a server that is
/// gone (the example's `Deploy/nginx-fleet.conf`). After a restart every location answers `404`, and the client starts
/// over; the spooler's sweep (`removeStaleFiles`, `S3Store.abortStaleUploads`) removes what the old process left.
/// An upload that no request feeds for ``Configuration/window`` fails as abandoned: its route ends with
/// `MultipartError.Code.timedOut`, which removes its files and aborts its object-storage upload. Only an append that
/// brings bytes starts a new window (an empty one does not), and no upload outlives ``Configuration/lifetime``.
///
/// What a paused upload holds until it resumes, ends, or its window passes: its route's task, its admission slot
/// and its address's share of them (`UploadAdmission`), its spool file and descriptor (or its object-storage
/// upload), its spooler's write batch (about 1.3 MiB) and its share of the disk budget. When the admission cuts it
/// to make room, its body fails at once and its route lets all of that go; the slot is free only once it has.
public final class ResumableUploads: @unchecked Sendable {
    /// What is offered and how long it waits.
    public struct Configuration: Sendable, Hashable {
        /// How long an upload whose connection dropped waits for the client to resume. Default 5 minutes.
        public var window: Duration
        /// The most uploads offered resumption at once: past it, a new upload goes as a plain request. Default
        /// 10,000.
        public var maxUploads: Int
        /// The request paths (without the query) whose uploads are offered resumption; nil for every `POST` and
        /// `PUT`.
        public var paths: Set<String>?
        /// The longest an upload may take in all, from its creation, however it is fed: then it fails as expired
        /// (`MultipartError.Code.timedOut`). Default an hour; raise it for large files over slow links.
        public var lifetime: Duration
        /// The most bytes an upload's body may have, announced as `Upload-Limit: max-size` (on the `104`, the
        /// creation's answer, `HEAD` and `OPTIONS`): a creation whose length (`Upload-Length`, or a complete
        /// request's `Content-Length`) is larger is not offered resumption. Nil (the default) announces none; the
        /// route's own limits (the spooler's) hold either way, so set it to the largest body they take.
        public var maxSize: Int64?
        /// This server's name among several behind one load balancer, at the front of each upload's token
        /// (`/resumable_upload/NODE-…`), so that the balancer sends an upload's `HEAD` and `PATCH` to the server that
        /// holds it (the example's `Deploy/nginx-fleet.conf` routes by it). ASCII letters and digits, at most 32 of
        /// them: any other character is dropped; nil or empty (the default) for a token of hex alone.
        public var node: String? {
            get { nodeName }
            set { nodeName = newValue.map(Self.nodeCharacters).flatMap { $0.isEmpty ? nil : $0 } }
        }
        private var nodeName: String?
        /// Whether a creation gets `104 Upload Resumption Supported` at once (default true). Turn it off behind a
        /// proxy that cannot pass an interim answer on: nginx 1.22 takes a `104` for the final answer and holds what
        /// follows until the server closes the connection (10 s for a creation, in the example's fleet). Without it,
        /// only a creation that says `Upload-Complete: ?0` is offered resumption (the client learns the location
        /// from its `201`, as the example's browser page does); a complete one goes as a plain request.
        public var interimResponses: Bool

        public init(
            window: Duration = .seconds(300), maxUploads: Int = 10_000, paths: Set<String>? = nil,
            lifetime: Duration = .seconds(3600), maxSize: Int64? = nil, node: String? = nil,
            interimResponses: Bool = true
        ) {
            self.interimResponses = interimResponses
            self.window = window
            self.maxUploads = max(0, maxUploads)
            self.paths = paths
            self.lifetime = lifetime
            self.maxSize = maxSize.map { max(0, $0) }
            self.node = node
        }

        /// `name`'s ASCII letters and digits, the first 32.
        private static func nodeCharacters(_ name: String) -> String {
            String(name.filter { $0.isASCII && ($0.isLetter || $0.isNumber) }.prefix(32))
        }
    }

    /// How long a client asking an upload's offset (`HEAD`) lets the request that fed the upload end on its own,
    /// so that the offset counts what that request's connection brought before it dropped; a connection that hangs
    /// half-open is cut off then (``ResumableBody/takeOver(after:)``).
    package static let offsetGrace: Duration = .seconds(1)

    /// Where the upload resources live: `/resumable_upload/` and the upload's token.
    public static let resourcePrefix = "/resumable_upload/"

    /// The request field that carries an announced upload's token from the pipeline to the route's responder.
    /// Removed from every request that arrives, so that no client can name another's upload with it.
    package static let tokenField = "StreamingMultipart-Resumable-Upload"

    public let configuration: Configuration

    /// An announced upload, and whether a responder took it.
    private struct Entry {
        let upload: Upload
        var claimed = false
    }

    private let uploads = NIOLockedValueBox<[String: Entry]>([:])
    /// Resumptions, abandoned and paused uploads, made with the metrics factory in effect when this is made.
    private let metrics = ResumableMetrics()

    public init(_ configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The uploads announced and not over.
    public var count: Int { uploads.withLockedValue { $0.count } }

    // MARK: The pipeline

    /// A creation request the pipeline offered resumption to.
    package struct Announcement {
        package let token: String
        /// `104 Upload Resumption Supported` with the upload's location; nil without
        /// ``Configuration/interimResponses``.
        package let head: HTTPResponseHead?
    }

    /// Offers resumption to `head` when it asks for it (a `POST` or `PUT` over HTTP/1.1 or an HTTP/2 stream, of a
    /// spoken interop version, that says whether it completes the upload, on one of ``Configuration/paths``; one
    /// that does not complete it without ``Configuration/interimResponses``) and there is room: registers the upload
    /// and returns its `104`.
    package func announce(_ head: HTTPRequestHead) -> Announcement? {
        guard head.version.major > 1 || head.version.minor >= 1, head.method == .POST || head.method == .PUT,
            let version = head.headers.first(name: "Upload-Draft-Interop-Version"),
            ResumableUpload.serverVersions.contains(version),
            let completes = ResumableUpload.completes(version: version, field: { head.headers.first(name: $0) }),
            configuration.interimResponses || !completes,
            head.headers.first(name: "Upload-Offset").map({ ResumableUpload.offset($0) == 0 }) ?? true
        else { return nil }
        let path = String(head.uri.prefix { $0 != "?" })
        guard !path.hasPrefix(Self.resourcePrefix), configuration.paths?.contains(path) ?? true else { return nil }
        // The length: `Upload-Length`, or a complete request's `Content-Length`; both must agree (a malformed or
        // disagreeing `Upload-Length` is not taken for resumption), and fit under the announced `max-size`.
        var length = completes ? head.headers.first(name: "Content-Length").flatMap { Int64($0) } : nil
        if let field = head.headers.first(name: "Upload-Length") {
            guard let declared = ResumableUpload.length(field), length.map({ $0 == declared }) ?? true else {
                return nil
            }
            length = declared
        }
        if let length, let maxSize = configuration.maxSize, length > maxSize { return nil }
        let token = configuration.node.map { $0 + "-" + Self.makeToken() } ?? Self.makeToken()
        let upload = Upload(
            token: token, version: version, length: length, lifetime: configuration.lifetime,
            body: ResumableBody(window: configuration.window, lifetime: configuration.lifetime, metrics: metrics))
        let added: Bool = uploads.withLockedValue { [maxUploads = configuration.maxUploads] uploads in
            guard uploads.count < maxUploads else { return false }
            uploads[token] = Entry(upload: upload)
            return true
        }
        guard added else { return nil }
        var answer = HTTPResponseHead(
            version: .http1_1, status: .custom(code: 104, reasonPhrase: "Upload Resumption Supported"))
        answer.headers.add(name: "Upload-Draft-Interop-Version", value: version)
        answer.headers.add(name: "Location", value: Self.resourcePrefix + token)
        let (name, value) = limitField(for: upload)
        answer.headers.add(name: name, value: value)
        return Announcement(token: token, head: configuration.interimResponses ? answer : nil)
    }

    /// The request of an announced upload ended without a responder taking it (the server refused it before its
    /// route ran, or the connection closed first): forgets the upload.
    package func release(unclaimed token: String) {
        uploads.withLockedValue { uploads in
            if let entry = uploads[token], !entry.claimed { uploads[token] = nil }
        }
    }

    // MARK: The responder

    /// The upload announced to the request carrying `token` in ``tokenField``, for its responder to run; nil when
    /// there is none or it was taken already.
    package func claim(_ token: String) -> Upload? {
        uploads.withLockedValue { uploads in
            guard let entry = uploads[token], !entry.claimed else { return nil }
            uploads[token]?.claimed = true
            return entry.upload
        }
    }

    /// The upload whose resource is `path` (``resourcePrefix`` and a token, without a query); nil for another path
    /// or an upload that is over or unknown.
    package func upload(at path: String) -> Upload? {
        guard path.hasPrefix(Self.resourcePrefix) else { return nil }
        let token = String(path.dropFirst(Self.resourcePrefix.count))
        return uploads.withLockedValue { $0[token]?.upload }
    }

    /// Whether `path` names an upload resource (known or not).
    package static func isResource(_ path: String) -> Bool { path.hasPrefix(resourcePrefix) }

    /// Runs `route` with `upload`'s body as the one an admission ticket taken inside it ends when cut
    /// (`UploadAdmission.ticket(for:)`), so that a cut upload lets go of what it holds even while paused.
    package func reading<Result>(_ upload: Upload, _ route: () async throws -> Result) async rethrows -> Result {
        try await ResumableBody.$beingRead.withValue(upload.body) { try await route() }
    }

    /// The upload's route answered: its location answers `404` from now on.
    package func remove(_ upload: Upload) {
        uploads.withLockedValue { uploads in
            if uploads[upload.token]?.upload === upload { uploads[upload.token] = nil }
        }
    }

    /// Ends every upload (the server shutting down): their routes end with `MultipartError.Code.cancelled`.
    public func cancelAll() {
        let all = uploads.withLockedValue { Array($0.values) }
        for entry in all { entry.upload.body.cancel() }
    }

    /// `Upload-Limit` (RFC 9651 dictionary): `max-size` when ``Configuration/maxSize`` is set and, for an upload,
    /// `max-age`, the seconds left of its lifetime; `min-size=0` when there is neither (the draft's "no limit").
    package func limitField(for upload: Upload? = nil) -> (String, String) {
        var limits: [String] = []
        if let maxSize = configuration.maxSize { limits.append("max-size=\(maxSize)") }
        if let upload { limits.append("max-age=\(upload.secondsLeft)") }
        return ("Upload-Limit", limits.isEmpty ? "min-size=0" : limits.joined(separator: ", "))
    }

    /// Whether `head` asks which limits a creation on its path would have (`OPTIONS` of a spoken interop version,
    /// on one of ``Configuration/paths``, or `OPTIONS *`): its answer is `204` with ``limitField(for:)``.
    package func asksLimits(method: String, path: String, version: String?) -> Bool {
        guard method == "OPTIONS", let version, ResumableUpload.serverVersions.contains(version) else { return false }
        return path == "*" || (!Self.isResource(path) && configuration.paths?.contains(path) ?? true)
    }

    /// 128 random bits in hex.
    private static func makeToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }
}

extension ResumableUploads {
    /// One announced upload: its body, and where its route's answer goes.
    package final class Upload: Sendable {
        package let token: String
        /// The client's interop version, which every answer echoes.
        package let version: String
        package let body: ResumableBody
        /// When its lifetime ends, as `Upload-Limit: max-age` says it.
        private let expires: ContinuousClock.Instant
        /// The whole body's length once known (`Upload-Length`, or a completing request's `Content-Length` and
        /// offset): every later request must agree.
        private let knownLength: NIOLockedValueBox<Int64?>

        /// The requests waiting for the route's answer, until it answers: then the answer and the request it
        /// belongs to.
        private enum Answering {
            case waiting([(segment: Int, wait: CheckedContinuation<(any Sendable)?, Never>)])
            case answered(segment: Int?, parts: any Sendable)
        }

        private let answering = NIOLockedValueBox(Answering.waiting([]))

        init(token: String, version: String, length: Int64?, lifetime: Duration, body: ResumableBody) {
            self.token = token
            self.version = version
            self.knownLength = NIOLockedValueBox(length)
            self.expires = .now + lifetime
            self.body = body
        }

        /// The whole body's length, when known.
        package var length: Int64? { knownLength.withLockedValue { $0 } }

        /// Records `length` as the body's: false when another was known (the draft's inconsistent length).
        package func record(length: Int64) -> Bool {
            knownLength.withLockedValue { known in
                if let known { return known == length }
                known = length
                return true
            }
        }

        /// The whole seconds left of its lifetime, 0 or more.
        var secondsLeft: Int64 { max(0, (expires - .now).components.seconds) }

        /// The route answered with `parts` (the transport's own), for request `segment` (nil: for no request, the
        /// upload having failed while none fed it). Each request waiting in ``answer(for:)`` learns whether it is
        /// the one.
        package func answered(with parts: any Sendable, for segment: Int?) {
            let waiting = answering.withLockedValue { answering in
                defer { answering = .answered(segment: segment, parts: parts) }
                if case .waiting(let waiters) = answering { return waiters }
                return []
            }
            for waiter in waiting { waiter.wait.resume(returning: waiter.segment == segment ? parts : nil) }
        }

        /// Waits for the route's answer; returns it when it belongs to request `segment`, else nil.
        package func answer(for segment: Int) async -> (any Sendable)? {
            await withCheckedContinuation { wait in
                let answer: (segment: Int?, parts: any Sendable)? = answering.withLockedValue { answering in
                    switch answering {
                    case .answered(let answered, let parts):
                        return (answered, parts)
                    case .waiting(var waiters):
                        waiters.append((segment, wait))
                        answering = .waiting(waiters)
                        return nil
                    }
                }
                if let answer { wait.resume(returning: answer.segment == segment ? answer.parts : nil) }
            }
        }

        /// The fields every answer about the upload carries: the interop version, the offset, and whether it is
        /// complete (`complete`, else whether its last request completed it).
        package func stateFields(complete: Bool? = nil) -> [(String, String)] {
            [
                ("Upload-Draft-Interop-Version", version), ("Upload-Offset", String(body.offset)),
                ResumableUpload.completeField(complete ?? body.isComplete, version: version),
            ]
        }
    }
}
