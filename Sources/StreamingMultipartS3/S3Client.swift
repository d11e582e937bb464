import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// Signed requests to one bucket over AsyncHTTPClient, and S3's answers read: its XML errors into ``S3Error``.
struct S3Client: Sendable {
    let configuration: S3Configuration
    let http: HTTPClient

    /// An answer S3 gave with a 2xx status.
    struct Answer: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Sends one signed request for `key` (nil for the bucket itself) and returns S3's answer.
    ///
    /// - Throws: ``S3Error/Code/service`` with S3's code, message, status and request id for an answer outside
    ///   2xx; ``S3Error/Code/transport`` when the connection fails; `CancellationError`.
    func send(
        _ method: HTTPMethod, key: String?, query: [(name: String, value: String)] = [],
        headers: [(name: String, value: String)] = [], body: ByteBuffer = ByteBuffer(), payloadHash: String? = nil
    ) async throws -> Answer {
        let (url, path, host) = location(of: key)
        var request = SigV4Signer.Request(
            method: method.rawValue, path: path, query: query, headers: [("host", host)] + headers)
        let signer = SigV4Signer(credentials: configuration.credentials, region: configuration.region)
        signer.sign(
            &request, payloadHash: payloadHash ?? SigV4Signer.hexSHA256(of: body.readableBytesView), date: Date())

        let encodedQuery = query.map {
            SigV4Signer.encode($0.name, keepingSlash: false) + "=" + SigV4Signer.encode($0.value, keepingSlash: false)
        }
        var http = HTTPClientRequest(url: url + (query.isEmpty ? "" : "?" + encodedQuery.joined(separator: "&")))
        http.method = method
        for (name, value) in request.headers where name.lowercased() != "host" {
            http.headers.add(name: name, value: value)
        }
        http.headers.replaceOrAdd(name: "Host", value: host)
        if body.readableBytes > 0 || method == .PUT || method == .POST {
            http.headers.replaceOrAdd(name: "Content-Length", value: String(body.readableBytes))
            http.body = .bytes(body)  // no copy: the part's one buffer, kept for a retry
        }
        let response: HTTPClientResponse
        var bytes: ByteBuffer
        do {
            response = try await self.http.execute(http, timeout: .seconds(300))
            bytes = try await response.body.collect(upTo: 16 << 20)
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
