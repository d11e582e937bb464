import Crypto
import Foundation
import StreamingMultipart

/// Signs requests with AWS Signature Version 4, in the header form (`Authorization: AWS4-HMAC-SHA256 …`), on
/// swift-crypto's HMAC and SHA-256.
///
/// ```swift
/// let signer = SigV4Signer(credentials: try .environment(), region: "us-east-1")
/// var request = SigV4Signer.Request(
///     method: "PUT", path: "/bucket/uploads/a1b2", headers: [("host", "127.0.0.1:9000")])
/// signer.sign(&request, payloadHash: SigV4Signer.hexSHA256(of: body), date: Date())
/// // request.headers now holds x-amz-date, x-amz-content-sha256, the token if any, and Authorization.
/// ```
///
/// The request's path and query are given decoded: the signer encodes them as S3 does (RFC 3986's unreserved
/// characters kept, every other byte of their UTF-8 as `%XX`; `/` kept in the path). For the `s3` service the path
/// is signed as it is; for others, as AWS's other services read it, its dot segments and empty segments are
/// removed first. Every header given is signed; duplicates are joined with commas, values trimmed and their runs
/// of whitespace made one space.
struct SigV4Signer: Sendable {
    var credentials: S3Credentials
    var region: String
    var service: String
    /// The signing keys made so far, shared by every copy of this signer (a client's concurrent requests).
    let keys = SigningKeys()

    init(credentials: S3Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The parts of an HTTP request that a signature covers.
    struct Request: Sendable {
        var method: String
        /// The path, decoded (`/bucket/my photo.jpg`, not `%20`).
        var path: String
        /// The query's items, decoded, in any order.
        var query: [(name: String, value: String)]
        /// The headers to sign and send; ``SigV4Signer/sign(_:payloadHash:date:)`` adds its own here.
        var headers: [(name: String, value: String)]

        init(
            method: String, path: String, query: [(name: String, value: String)] = [],
            headers: [(name: String, value: String)] = []
        ) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
        }

        /// The first value of the header `name` (in any case), or nil.
        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    /// The payload hash S3 accepts for a body it is not to check against the signature.
    static let unsignedPayload = "UNSIGNED-PAYLOAD"

    /// Signs `request`: adds `x-amz-date`, `x-amz-security-token` when the credentials carry one, and, for `s3`,
    /// `x-amz-content-sha256`, each unless the request has it already, then `Authorization`.
    ///
    /// - Parameters:
    ///   - request: the request, to which the headers are added.
    ///   - payloadHash: the body's SHA-256 in lowercase hex (``hexSHA256(of:)``), or ``unsignedPayload``.
    ///   - date: the time of the signature, within 15 minutes of S3's clock.
    func sign(_ request: inout Request, payloadHash: String, date: Date) {
        let timestamp = Self.timestamp(date)
        if request.header("x-amz-date") == nil { request.headers.append(("x-amz-date", timestamp)) }
        if let token = credentials.sessionToken, request.header("x-amz-security-token") == nil {
            request.headers.append(("x-amz-security-token", token))
        }
        if service == "s3", request.header("x-amz-content-sha256") == nil {
            request.headers.append(("x-amz-content-sha256", payloadHash))
        }
        request.headers.append(("Authorization", authorization(for: request, payloadHash: payloadHash, date: date)))
    }

    /// The `Authorization` value for `request` as it stands (its `x-amz-date` header, if any, must say `date`).
    func authorization(for request: Request, payloadHash: String, date: Date) -> String {
        let canonical = canonicalRequest(request, payloadHash: payloadHash)
        let toSign = stringToSign(canonicalRequest: canonical.text, date: date)
        let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(toSign.utf8), using: signingKey(date)))
        return "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope(date)), "
            + "SignedHeaders=\(canonical.signedHeaders), Signature=\(signature)"
    }

    /// The canonical request (Signature Version 4's first step), and the signed headers' names.
    func canonicalRequest(_ request: Request, payloadHash: String) -> (text: String, signedHeaders: String) {
        let path = service == "s3" ? request.path : Self.normalizedPath(request.path)
        // Sorted by encoded name, then encoded value: both ASCII, so `<` is byte order.
        let items: [(name: String, value: String)] = request.query.map {
            (Self.encode($0.name, keepingSlash: false), Self.encode($0.value, keepingSlash: false))
        }
        let sorted = items.sorted { $0.name == $1.name ? $0.value < $1.value : $0.name < $1.name }
        let query = sorted.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        var headers: [String: [String]] = [:]
        for (name, value) in request.headers {
            let trimmed = value.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            headers[name.lowercased(), default: []].append(trimmed)
        }
        let names = headers.keys.sorted()
        let canonicalHeaders = names.map { "\($0):\(headers[$0]!.joined(separator: ","))\n" }.joined()
        let signedHeaders = names.joined(separator: ";")
        let text = [
            request.method, Self.encode(path.isEmpty ? "/" : path, keepingSlash: true), query, canonicalHeaders,
            signedHeaders, payloadHash,
        ].joined(separator: "\n")
        return (text, signedHeaders)
    }

    /// The string to sign (the second step): the algorithm, the time, the scope, the canonical request's hash.
    func stringToSign(canonicalRequest: String, date: Date) -> String {
        "AWS4-HMAC-SHA256\n\(Self.timestamp(date))\n\(scope(date))\n\(Self.hexSHA256(of: Data(canonicalRequest.utf8)))"
    }

    private func scope(_ date: Date) -> String {
        "\(Self.timestamp(date).prefix(8))/\(region)/\(service)/aws4_request"
    }

    /// The day's signing key: four HMACs from the secret, made once a day for a secret and kept in ``keys``.
    private func signingKey(_ date: Date) -> SymmetricKey {
        let day = String(Self.timestamp(date).prefix(8))
        let scope = SigningKeys.Scope(
            secret: credentials.secretAccessKey, day: day, region: region, service: service)
        return keys.key(for: scope) {
            func hmac(_ key: SymmetricKey, _ text: String) -> SymmetricKey {
                SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: key)))
            }
            let secret = SymmetricKey(data: Data("AWS4\(credentials.secretAccessKey)".utf8))
            return hmac(hmac(hmac(hmac(secret, day), region), service), "aws4_request")
        }
    }

    /// The SHA-256 of `bytes` in lowercase hex: a payload hash.
    static func hexSHA256(of bytes: some DataProtocol) -> String { hex(SHA256.hash(data: bytes)) }

    static func hex(_ bytes: some Sequence<UInt8>) -> String { Hex.lowercase(bytes) }

    /// `date` as Signature Version 4 writes it: `20150830T123600Z`, in UTC.
    static func timestamp(_ date: Date) -> String {
        // The proleptic Gregorian date of a count of days since 1970-01-01, in integer arithmetic (Howard Hinnant's
        // days_from_civil inverse), rather than a Calendar made for each signature.
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let time = seconds - days * 86_400
        let shifted = days + 719_468  // days since 0000-03-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)\(two(month))\(two(day))T\(two(time / 3_600))\(two(time / 60 % 60))\(two(time % 60))Z"
    }

    /// `text`'s UTF-8 with every byte but RFC 3986's unreserved ones (and `/` when `keepingSlash`) as `%XX`.
    static func encode(_ text: String, keepingSlash: Bool) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var encoded: [UInt8] = []
        encoded.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                UInt8(ascii: "~"):
                encoded.append(byte)
            case UInt8(ascii: "/") where keepingSlash:
                encoded.append(byte)
            default:
                encoded += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }

    /// The path with its `.` and `..` segments resolved and its empty segments dropped (RFC 3986 §5.2.4), a last
    /// `/` kept: how services other than S3 read a path before they sign it.
    static func normalizedPath(_ path: String) -> String {
        var segments: [Substring] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch segment {
            case ".": continue
            case "..": _ = segments.popLast()
            default: segments.append(segment)
            }
        }
        let trailing = path.count > 1 && path.hasSuffix("/") && !segments.isEmpty
        return "/" + segments.joined(separator: "/") + (trailing ? "/" : "")
    }
}
