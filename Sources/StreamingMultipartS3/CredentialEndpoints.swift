import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import StreamingMultipart

/// The HTTP a credential provider speaks: one request, its answer read up to 64 KiB, the whole exchange (connection,
/// head and body) within its timeout, every failure an ``S3Error`` of ``S3Error/Code/missingCredentials`` naming the
/// provider and the URL (never a token or a secret).
///
/// Redirects are never followed, as botocore follows none for these endpoints: a client that follows them sends
/// the request on, its `X-aws-ec2-metadata-token` or `Authorization` with it, to whatever origin the answer names.
/// So the fetches go through one client of the library's own that disallows them, not the store's (which may
/// follow); a redirect is then an answer that is not 200, and refused.
struct CredentialFetcher: Sendable {
    let http = Self.client
    /// Waits out a fetch's timeout: `Task.sleep`, or in a test the test's own signal, so that no test waits on a
    /// wall clock.
    let wait: @Sendable (Duration) async throws -> Void

    /// A fetcher on the library's own client, which follows no redirect.
    init(wait: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }) {
        self.wait = wait
    }

    /// The client every credential fetch uses: the process's singleton event loops, redirects disallowed. A
    /// process-wide value like `HTTPClient.shared`, never shut down.
    static let client = HTTPClient(
        eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))

    /// The most bytes of an answer read: a credentials document is a few hundred.
    static let maxAnswerBytes = 64 << 10

    /// The answer's body when its status is 200, read whole within `timeout` (a trickling body is cut there).
    func send(
        _ method: HTTPMethod, _ url: String, headers: [(String, String)] = [], body: String? = nil,
        timeout: Duration, provider: String
    ) async throws -> String {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let status: HTTPResponseStatus
        let bytes: ByteBuffer
        do {
            let timedOut = S3Error(
                code: .missingCredentials,
                message: "\(provider): \(method.rawValue) \(url) gave no whole answer within \(timeout)")
            (status, bytes) = try await withDeadline(
                waiting: { [wait] in try await wait(timeout) }, timedOut: timedOut,
                operation: { [http, request] in
                    let response = try await http.execute(
                        request, timeout: .nanoseconds(Int64(timeout / .nanoseconds(1))))
                    return (response.status, try await response.body.collect(upTo: Self.maxAnswerBytes))
                })
        } catch let error as CancellationError {
            throw error
        } catch let error as S3Error {
            throw error
        } catch {
            throw S3Error(code: .missingCredentials, message: "\(provider): \(method.rawValue) \(url) failed: \(error)")
        }
        let text = String(buffer: bytes)
        guard status == .ok else {
            let detail = XMLText.value(of: "Message", in: text).map { ": \($0)" } ?? ""
            let redirect = (300..<400).contains(status.code) ? " (a redirect, which is never followed)" : ""
            throw S3Error(
                code: .missingCredentials,
                message: "\(provider): \(method.rawValue) \(url) answered \(status.code)\(redirect)\(detail)",
                status: Int(status.code))
        }
        return text
    }

    /// The JSON document the container endpoint and the instance metadata service answer with.
    static func credentials(fromJSON text: String, provider: String) throws -> S3Credentials {
        struct Document: Decodable {
            var accessKeyID: String?
            var secretAccessKey: String?
            var token: String?
            var expiration: String?
            var code: String?
            var message: String?

            enum CodingKeys: String, CodingKey {
                case accessKeyID = "AccessKeyId"
                case secretAccessKey = "SecretAccessKey"
                case token = "Token"
                case expiration = "Expiration"
                case code = "Code"
                case message = "Message"
            }
        }
        guard let document = try? JSONDecoder().decode(Document.self, from: Data(text.utf8)) else {
            throw S3Error(code: .missingCredentials, message: "\(provider): the answer is not a credentials document")
        }
        if let code = document.code, code != "Success" {
            throw S3Error(code: .missingCredentials, message: "\(provider): \(code): \(document.message ?? "")")
        }
        guard let key = document.accessKeyID, !key.isEmpty, let secret = document.secretAccessKey, !secret.isEmpty
        else {
            throw S3Error(
                code: .missingCredentials, message: "\(provider): the answer has no AccessKeyId or SecretAccessKey")
        }
        return S3Credentials(
            accessKeyID: key, secretAccessKey: secret, sessionToken: document.token.flatMap { $0.isEmpty ? nil : $0 },
            expiration: try document.expiration.map { try date($0, provider: provider) })
    }

    /// An ISO 8601 time as the endpoints write it, with or without fractions of a second.
    static func date(_ text: String, provider: String) throws -> Date {
        for options: ISO8601DateFormatter.Options in [
            [.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds],
        ] {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = options
            if let date = formatter.date(from: text) { return date }
        }
        throw S3Error(code: .missingCredentials, message: "\(provider): an expiration that is not a time: \(text)")
    }

    /// A header value from a file or a variable: no line breaks, which would end the header.
    static func headerValue(_ value: String, from source: String, provider: String) throws -> String {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, !trimmed.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
            throw S3Error(code: .missingCredentials, message: "\(provider): \(source) is empty or holds a line break")
        }
        return trimmed
    }

    static func read(file path: String, variable: String, provider: String) throws -> String {
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw S3Error(code: .missingCredentials, message: "\(provider): cannot read \(variable) (\(path))")
        }
    }
}

/// ECS and EKS Pod Identity's endpoint: `GET` the URI, with the authorization token when one is given.
struct ContainerCredentials {
    static let provider = "container"
    let url: String
    let tokenFile: String?
    let token: String?

    /// Nil while neither URI is set.
    init?(environment: [String: String]) throws {
        if let full = environment.firstSet("AWS_CONTAINER_CREDENTIALS_FULL_URI") {
            guard let parsed = URL(string: full), let host = parsed.host,
                Self.mayBeSentTo(scheme: parsed.scheme, host: host)
            else {
                throw S3Error(
                    code: .missingCredentials,
                    message: "container: AWS_CONTAINER_CREDENTIALS_FULL_URI must be https, or http to a loopback "
                        + "address or the ECS/EKS link-local one: \(full)")
            }
            url = full
        } else if let relative = environment.firstSet("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") {
            url = "http://169.254.170.2" + (relative.hasPrefix("/") ? "" : "/") + relative
        } else {
            return nil
        }
        tokenFile = environment.firstSet("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")
        token = environment.firstSet("AWS_CONTAINER_AUTHORIZATION_TOKEN")
    }

    /// botocore's rule: a full URI over plain http only to this machine, named by a loopback IP literal or
    /// `localhost`, or to the container agent's link-local address. Never another name: `127.x.attacker.example`
    /// begins like a loopback address but is resolved, and the authorization token would go to whoever answers.
    static func mayBeSentTo(scheme: String?, host: String) -> Bool {
        switch scheme?.lowercased() {
        case "https": return true
        case "http":
            let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
            return bare == "localhost" || isLoopbackIPv4Literal(bare)
                || ["::1", "0:0:0:0:0:0:0:1", "169.254.170.2", "169.254.170.23", "fd00:ec2::23"].contains(bare)
        default: return false
        }
    }

    /// Whether `host` is a dotted-quad IPv4 literal in 127.0.0.0/8: four decimal numbers up to 255, none with a
    /// leading zero (which `inet_aton` would read as octal: `0127.0.0.1` is 87.0.0.1).
    static func isLoopbackIPv4Literal(_ host: String) -> Bool {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "127" else { return false }
        return parts.allSatisfy { part in
            (1...3).contains(part.count) && part.allSatisfy(\.isASCII) && part.allSatisfy(\.isNumber)
                && (part == "0" || !part.hasPrefix("0")) && Int(part).map { $0 <= 255 } == true
        }
    }

    func fetch(with fetcher: CredentialFetcher) async throws -> S3Credentials {
        var headers: [(String, String)] = []
        if let tokenFile {
            let token = try CredentialFetcher.read(
                file: tokenFile, variable: "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", provider: Self.provider)
            headers.append(
                (
                    "Authorization",
                    try CredentialFetcher.headerValue(token, from: "the token file", provider: Self.provider)
                ))
        } else if let token {
            headers.append(
                (
                    "Authorization",
                    try CredentialFetcher.headerValue(
                        token, from: "AWS_CONTAINER_AUTHORIZATION_TOKEN", provider: Self.provider)
                ))
        }
        let text = try await fetcher.send(.GET, url, headers: headers, timeout: .seconds(5), provider: Self.provider)
        return try CredentialFetcher.credentials(fromJSON: text, provider: Self.provider)
    }
}

/// EC2's instance metadata service, version 2: a session token first, then the role's credentials with it.
struct InstanceMetadataCredentials {
    static let provider = "instance metadata"
    let endpoint: String

    /// Nil when `AWS_EC2_METADATA_DISABLED` is `true`.
    init?(environment: [String: String]) {
        if environment["AWS_EC2_METADATA_DISABLED"]?.lowercased() == "true" { return nil }
        var endpoint = environment.firstSet("AWS_EC2_METADATA_SERVICE_ENDPOINT") ?? "http://169.254.169.254"
        while endpoint.hasSuffix("/") { endpoint.removeLast() }
        self.endpoint = endpoint
    }

    func fetch(with fetcher: CredentialFetcher) async throws -> S3Credentials {
        let provider = Self.provider
        let token = try await fetcher.send(
            .PUT, endpoint + "/latest/api/token", headers: [("X-aws-ec2-metadata-token-ttl-seconds", "21600")],
            timeout: .seconds(1), provider: provider)
        let session = [
            (
                "X-aws-ec2-metadata-token",
                try CredentialFetcher.headerValue(token, from: "the token", provider: provider)
            )
        ]
        let roles = try await fetcher.send(
            .GET, endpoint + "/latest/meta-data/iam/security-credentials/", headers: session, timeout: .seconds(1),
            provider: provider)
        guard let role = roles.split(whereSeparator: \.isNewline).first.map(String.init), !role.isEmpty,
            !role.contains("/")
        else {
            throw S3Error(code: .missingCredentials, message: "\(provider): the instance has no role")
        }
        let text = try await fetcher.send(
            .GET,
            endpoint + "/latest/meta-data/iam/security-credentials/" + SigV4Signer.encode(role, keepingSlash: false),
            headers: session, timeout: .seconds(1), provider: provider)
        return try CredentialFetcher.credentials(fromJSON: text, provider: provider)
    }
}

/// STS's `AssumeRoleWithWebIdentity`: the token file's token for the role's temporary credentials.
struct WebIdentityCredentials {
    static let provider = "web identity"
    let tokenFile: String
    let roleARN: String
    let sessionName: String
    let endpoint: String

    /// Nil while the token file or the role is unset.
    init?(environment: [String: String]) {
        guard let tokenFile = environment.firstSet("AWS_WEB_IDENTITY_TOKEN_FILE"),
            let roleARN = environment.firstSet("AWS_ROLE_ARN")
        else { return nil }
        self.tokenFile = tokenFile
        self.roleARN = roleARN
        sessionName =
            environment.firstSet("AWS_ROLE_SESSION_NAME") ?? "streaming-multipart-\(Int(Date().timeIntervalSince1970))"
        // The region as the store reads it (AWS_REGION, AWS_DEFAULT_REGION, us-east-1): one reading of it.
        let regional = "https://sts.\(S3Store.Configuration.environmentRegion(environment)).amazonaws.com"
        var endpoint = environment.firstSet("AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL") ?? regional
        while endpoint.hasSuffix("/") { endpoint.removeLast() }
        self.endpoint = endpoint
    }

    func fetch(with fetcher: CredentialFetcher) async throws -> S3Credentials {
        let provider = Self.provider
        let token = try CredentialFetcher.read(
            file: tokenFile, variable: "AWS_WEB_IDENTITY_TOKEN_FILE", provider: provider
        )
        .trimmingCharacters(in: .whitespacesAndNewlines)
        let items: [(name: String, value: String)] = [
            ("Action", "AssumeRoleWithWebIdentity"), ("Version", "2011-06-15"), ("RoleArn", roleARN),
            ("RoleSessionName", sessionName), ("WebIdentityToken", token),
        ]
        let form = items.map { (item: (name: String, value: String)) -> String in
            SigV4Signer.encode(item.name, keepingSlash: false) + "="
                + SigV4Signer.encode(item.value, keepingSlash: false)
        }
        let text = try await fetcher.send(
            .POST, endpoint + "/", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: form.joined(separator: "&"), timeout: .seconds(10), provider: provider)
        guard let key = XMLText.value(of: "AccessKeyId", in: text),
            let secret = XMLText.value(of: "SecretAccessKey", in: text),
            let sessionToken = XMLText.value(of: "SessionToken", in: text)
        else {
            throw S3Error(code: .missingCredentials, message: "\(provider): STS's answer has no credentials")
        }
        return S3Credentials(
            accessKeyID: key, secretAccessKey: secret, sessionToken: sessionToken,
            expiration: try XMLText.value(of: "Expiration", in: text).map {
                try CredentialFetcher.date($0, provider: provider)
            })
    }
}

extension [String: String] {
    /// The value of the first of `names` that is set and not empty: how the SDKs read their variables.
    func firstSet(_ names: String...) -> String? {
        names.lazy.compactMap { self[$0] }.first { !$0.isEmpty }
    }
}
