import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import Metrics
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import StreamingMultipart

/// Signed requests to one bucket over AsyncHTTPClient, and S3's answers read: its XML errors into ``S3Error``.
struct S3Client: Sendable {
    let configuration: S3Store.Configuration
    let http: HTTPClient
    /// One signer for the client's requests, so that they share its signing key of the day; each request signs
    /// with the credentials ``credentials`` holds then.
    let signer: SigV4Signer
    /// The credentials, kept and renewed before they expire, one renewal for all requests.
    let credentials: CredentialCache
    /// Retries, parts and bytes stored (``MultipartMetrics``), made with the factory in effect when the store is.
    let metrics = S3Metrics()

    init(configuration: S3Store.Configuration, http: HTTPClient, logger: Logger) {
        self.configuration = configuration
        self.http = http
        credentials = CredentialCache(
            provider: configuration.credentials, fetcher: CredentialFetcher(), logger: logger,
            now: configuration.now)
        signer = SigV4Signer(
            credentials: S3Credentials(accessKeyID: "", secretAccessKey: ""), region: configuration.region)
    }

    /// An answer S3 gave with a 2xx status.
    struct Answer: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// A request's body: bytes in a buffer (small requests), or a part's buffer, sent in copies of
    /// ``Body/chunkSize`` bytes so that AsyncHTTPClient never holds the part itself.
    enum Body: Sendable {
        case bytes(ByteBuffer)
        case part(PartLease)

        static let chunkSize = 64 << 10
        /// How many bytes a request may queue ahead of its event loop: see ``PartChunks``.
        static let paceEvery = 256 << 10
        static let empty = Body.bytes(ByteBuffer())

        var count: Int {
            switch self {
            case .bytes(let buffer): buffer.readableBytes
            case .part(let lease): lease.count
            }
        }

        var hexSHA256: String {
            switch self {
            case .bytes(let buffer): SigV4Signer.hexSHA256(of: buffer.readableBytesView)
            case .part(let lease): lease.part.map { SigV4Signer.hex($0.sha256()) } ?? ""
            }
        }

        /// The body for AsyncHTTPClient, whose connections run on `loops`.
        func request(on loops: [any EventLoop]) -> HTTPClientRequest.Body {
            switch self {
            case .bytes(let buffer): .bytes(buffer)
            case .part(let lease):
                .stream(PartChunks(lease: lease, loops: loops), length: .known(Int64(lease.count)))
            }
        }
    }

    /// A part's bytes as AsyncHTTPClient pulls them: one copy of ``Body/chunkSize`` bytes at a time, each taken
    /// from the lease (so that the part is held only while a chunk is copied).
    ///
    /// AsyncHTTPClient asks for the next chunk as soon as it has queued the last one's write for its event loop,
    /// and stops asking only once those writes ran and filled the channel's buffer: a source as fast as a memory
    /// copy would queue a whole part (8 MiB of chunks per request, seen as the heap growing by that much). So every
    /// ``Body/paceEvery`` bytes the chunks wait until the client's event loops have run what was queued before
    /// (a task that does nothing, on each loop at once; the connection's loop is not known), and the channel's
    /// backpressure holds the rest: at most about 256 KiB waits behind a request.
    struct PartChunks: AsyncSequence, Sendable {
        let lease: PartLease
        let loops: [any EventLoop]

        func makeAsyncIterator() -> Iterator { Iterator(lease: lease, loops: loops) }

        struct Iterator: AsyncIteratorProtocol {
            let lease: PartLease
            let loops: [any EventLoop]
            var offset = 0

            mutating func next() async throws -> ByteBuffer? {
                guard offset < lease.count else { return nil }
                if offset > 0, offset % Body.paceEvery == 0 {
                    let ran = loops.map { $0.submit {} }
                    for future in ran { try await future.get() }
                }
                // A lease ended means S3 has answered: the request is over, whatever still asks for its body.
                guard let part = lease.part else { throw CancellationError() }
                let chunk = part.chunk(from: offset, maxLength: Body.chunkSize)
                offset += chunk.readableBytes
                return chunk
            }
        }
    }

    /// Sends one signed request for `key` (nil for the bucket itself) and returns S3's answer.
    ///
    /// - Throws: ``S3Error/Code/service`` with S3's code, message, status and request id for an answer outside
    ///   2xx; ``S3Error/Code/transport`` when the connection fails; ``S3Error/Code/missingCredentials`` when no
    ///   credentials could be had; `CancellationError`.
    func send(
        _ method: HTTPMethod, key: String?, query: [(name: String, value: String)] = [],
        headers: [(name: String, value: String)] = [], body: Body = .empty, payloadHash: String? = nil
    ) async throws -> Answer {
        let (url, path, host) = location(of: key)
        var request = SigV4Signer.Request(
            method: method.rawValue, path: path, query: query, headers: [("host", host)] + headers)
        var signer = signer
        signer.credentials = try await credentials.current()
        signer.sign(&request, payloadHash: payloadHash ?? body.hexSHA256, date: Date())

        let encodedQuery = query.map {
            SigV4Signer.encode($0.name, keepingSlash: false) + "=" + SigV4Signer.encode($0.value, keepingSlash: false)
        }
        var http = HTTPClientRequest(url: url + (query.isEmpty ? "" : "?" + encodedQuery.joined(separator: "&")))
        http.method = method
        for (name, value) in request.headers where name.lowercased() != "host" {
            http.headers.add(name: name, value: value)
        }
        http.headers.replaceOrAdd(name: "Host", value: host)
        if body.count > 0 || method == .PUT || method == .POST {
            http.headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
            http.body = body.request(on: Array(self.http.eventLoopGroup.makeIterator()))
        }
        let response: HTTPClientResponse
        var bytes: ByteBuffer
        do {
            response = try await self.http.execute(
                http, timeout: .nanoseconds(Int64(configuration.requestTimeout / .nanoseconds(1))))
            bytes = try await response.body.collect(upTo: configuration.maxAnswerBytes)
        } catch let error as CancellationError {
            throw error
        } catch {
            throw S3Error(code: .transport, message: "\(method.rawValue) \(url) failed: \(error)")
        }
        let answer = Answer(
            status: Int(response.status.code), headers: response.headers,
            body: bytes.readBytes(length: bytes.readableBytes) ?? [])
        guard (200..<300).contains(answer.status) else { throw Self.error(answer, method: method, url: url) }
        return answer
    }

    /// The URL of `key` (or of the bucket), its path decoded as the signer takes it, and the `Host` value.
    func location(of key: String?) -> (url: String, path: String, host: String) {
        let endpoint = configuration.endpoint
        let scheme = endpoint.scheme ?? "http"
        let port = endpoint.port.map { ":\($0)" } ?? ""
        let endpointHost = endpoint.host ?? ""
        let host: String
        var path: String
        switch configuration.addressing {
        case .path:
            host = endpointHost + port
            path = "/" + configuration.bucket + "/" + (key ?? "")
        case .virtualHosted:
            host = configuration.bucket + "." + endpointHost + port
            path = "/" + (key ?? "")
        }
        if key == nil, path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return ("\(scheme)://\(host)" + SigV4Signer.encode(path, keepingSlash: true), path, host)
    }

    /// S3's error answer as an ``S3Error``: its XML `Code`, `Message` and `RequestId` (or the
    /// `x-amz-request-id` header; a HEAD answer has no body).
    static func error(_ answer: Answer, method: HTTPMethod, url: String) -> S3Error {
        let text = answer.text
        let code = XMLText.value(of: "Code", in: text)
        let message = XMLText.value(of: "Message", in: text) ?? "HTTP \(answer.status)"
        let requestID = XMLText.value(of: "RequestId", in: text) ?? answer.headers.first(name: "x-amz-request-id")
        return S3Error(
            code: .service, message: "\(method.rawValue) \(url): \(message)",
            serviceCode: code ?? "HTTP\(answer.status)",
            status: answer.status, requestID: requestID)
    }
}

/// The few values read out of S3's XML answers: the text of the first `<Tag>…</Tag>`, its entities decoded. S3's
/// answers are flat enough for this; nothing here parses XML in general.
enum XMLText {
    static func value(of tag: String, in text: String) -> String? {
        guard let start = text.range(of: "<\(tag)>"),
            let end = text.range(of: "</\(tag)>", range: start.upperBound..<text.endIndex)
        else { return nil }
        return decoded(String(text[start.upperBound..<end.lowerBound]))
    }

    /// The text inside each `<tag>…</tag>` of `text`, in order.
    static func blocks(_ tag: String, in text: String) -> [String] {
        var blocks: [String] = []
        var rest = text[...]
        while let start = rest.range(of: "<\(tag)>"),
            let end = rest.range(of: "</\(tag)>", range: start.upperBound..<rest.endIndex)
        {
            blocks.append(String(rest[start.upperBound..<end.lowerBound]))
            rest = rest[end.upperBound...]
        }
        return blocks
    }

    static func decoded(_ text: String) -> String {
        guard text.contains("&") else { return text }
        return text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&#34;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

/// A part's buffer lent to the requests that send it, and taken back (``end()``) once S3 has answered: what
/// AsyncHTTPClient keeps of a request after that (the body's sequence) then holds the lease alone, and the part's
/// buffer is free for the next part.
final class PartLease: Sendable {
    /// The part's size, which a request states as its `Content-Length`.
    let count: Int
    private let lent: NIOLockedValueBox<PartBuffer?>

    init(_ part: PartBuffer) {
        count = part.count
        lent = NIOLockedValueBox(part)
    }

    /// The part, or nil once the lease ended.
    var part: PartBuffer? { lent.withLockedValue { $0 } }

    /// Takes the part back.
    func end() { lent.withLockedValue { $0 = nil } }
}

/// An S3 store's metrics: requests retried, parts' durations, bytes S3 acknowledged.
final class S3Metrics: Sendable {
    let retries = Counter(label: MultipartMetrics.s3Retries)
    let partDuration = Timer(label: MultipartMetrics.s3PartDuration)
    let stored = Counter(label: MultipartMetrics.bytesStored)
}
