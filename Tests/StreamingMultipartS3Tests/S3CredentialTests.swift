import AsyncHTTPClient
import Foundation
import InMemoryLogging
import Logging
import MultipartTestSupport
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import StreamingMultipart
import Testing

@testable import StreamingMultipartS3

/// Tests/Peers/credential_peers.py: the container endpoint and IMDSv2 on 127.0.0.1, each answer a new key that moto's
/// IAM deletes when it expires, before a moto that checks every request's signature and takes STS's
/// AssumeRoleWithWebIdentity. Started once per test process; each test counts its own requests under an id.
final class CredentialPeers: @unchecked Sendable {
    static let available = Peers.python3(with: ["moto.server", "boto3"]) != nil
    static let started: CredentialPeers? = try? CredentialPeers()

    static func shared() throws -> CredentialPeers { try #require(started, "credential_peers.py did not start") }

    let script: PeerUploadServer
    let s3: URL
    let creds: String
    let bucket: String
    let role: String

    private init() throws {
        script = try PeerUploadServer(
            python: try #require(executableOnPath("python3")), script: "credential_peers.py", arguments: [],
            portFirst: false, quiet: true)
        let started = try #require(
            try JSONSerialization.jsonObject(with: Data(script.firstLine.utf8)) as? [String: String])
        s3 = try #require(URL(string: started["s3"] ?? ""))
        creds = try #require(started["creds"])
        bucket = try #require(started["bucket"])
        role = try #require(started["role"])
    }

    /// A new id for a test's requests, and the endpoints' base for keys that live `lifetime` seconds.
    func base(lifetime: Int = 3600) -> (id: String, url: String) {
        let id = "t" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        return (id, "\(creds)/\(id)/\(lifetime)")
    }

    func json(_ path: String, method: HTTPMethod = .GET) async throws -> [String: Int] {
        var request = HTTPClientRequest(url: creds + path)
        request.method = method
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        return try #require(try JSONSerialization.jsonObject(with: Data(String(buffer: body).utf8)) as? [String: Int])
    }

    /// What the test `id`'s requests did: `container`, `imds-token`, `imds`, `refused`, `issued`, `revoked`.
    func stats(_ id: String) async throws -> [String: Int] { try await json("/stats/\(id)") }

    /// Waits until the test `id`'s requests have done `what` at least `count` times; fails after 3,000 looks (a
    /// minute at least), for a step that never comes.
    func wait(_ id: String, until what: String, reaches count: Int) async throws {
        for _ in 0..<3000 {
            if try await stats(id)[what, default: 0] >= count { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("the test \(id)'s requests never did \(what) \(count) times: \(try await stats(id))")
        throw CancellationError()
    }

    /// Moves the test `id`'s clock on by `seconds`: the keys it was given that expire by then are deleted. What
    /// `id`'s requests did, then.
    func advance(_ id: String, by seconds: Int) async throws -> [String: Int] {
        try await json("/advance/\(id)/\(seconds)", method: .POST)
    }

    func size(of key: String) async throws -> Int? { try await json("/object/\(bucket)/\(key)")["size"] }

    /// A store into the peers' bucket whose credentials come from `provider`, and whose cache reads the time from
    /// `now` if given.
    func store(
        _ provider: S3CredentialProvider, partSize: Int = 5 << 20, now: (@Sendable () -> Date)? = nil
    ) throws -> S3Store {
        var configuration = try S3Store.Configuration(
            endpoint: s3, bucket: bucket, prefix: "creds/", region: "us-east-1", credentials: provider)
        configuration.partSize = partSize
        configuration.retry.initialDelay = .milliseconds(10)
        if let now { configuration.now = now }
        return try S3Store(configuration: configuration)
    }

    /// A form of one file of `bytes` spooled into the bucket through `store`: the file's key, its object read back
    /// by size.
    func upload(_ bytes: [UInt8], through store: S3Store) async throws -> String {
        var form = MultipartBody()
        try form.append(.data(Data(bytes), name: "file", filename: "f.bin"))
        return try await spool(chunkStream(try form.bytes(), size: 64 << 10), form.contentType, bytes, through: store)
    }

    /// `chunks`, a form whose last file is `bytes`, spooled into the bucket through `store`: that file's key, its
    /// object read back by size.
    func spool(
        _ chunks: AsyncStream<[UInt8]>, _ contentType: String, _ bytes: [UInt8], through store: S3Store
    ) async throws -> String {
        let spooled = try await MultipartSpooler(store: store, limits: .untimed).spool(chunks, contentType: contentType)
        let key = try #require(spooled.files.last?.storedObject?.key)
        #expect(try await size(of: key) == bytes.count, "the object as stored")
        return key
    }
}

/// Credentials that come from somewhere and come again: each provider against a real endpoint on 127.0.0.1, the
/// chain's order, renewal shared by concurrent requests, and keys that expire while an upload is under way.
@Suite(.enabled(if: CredentialPeers.available, "needs moto[server] and boto3 (pip): the endpoints and the S3 behind"))
struct S3CredentialTests {
    let small: [UInt8] = Array(repeating: 0x61, count: 1000)

    @Test func containerKeysSignUploadsThatMotoChecks() async throws {
        let peers = try CredentialPeers.shared()
        let (id, base) = peers.base()
        let tokenFile = try TemporaryFolder()
        defer { tokenFile.remove() }
        try Data("container-token\n".utf8).write(to: tokenFile.url.appendingPathComponent("token"))
        for environment in [
            [
                "AWS_CONTAINER_CREDENTIALS_FULL_URI": base + "/container",
                "AWS_CONTAINER_AUTHORIZATION_TOKEN": "container-token",
            ],
            [
                "AWS_CONTAINER_CREDENTIALS_FULL_URI": base + "/container",
                "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": tokenFile.url.appendingPathComponent("token").path,
                "AWS_CONTAINER_AUTHORIZATION_TOKEN": "a token the file overrides",
            ],
        ] {
            let store = try peers.store(.container(environment: environment))
            let credentials = try await store.credentials()
            #expect(credentials.expiration.map { $0 > Date() } == true && credentials.sessionToken == nil)
            _ = try await peers.upload(small, through: store)
        }
        #expect(try await peers.stats(id)["container"] == 2)
    }

    @Test func aWrongContainerTokenIsATypedErrorWithoutTheToken() async throws {
        let peers = try CredentialPeers.shared()
        let (id, base) = peers.base()
        let store = try peers.store(
            .container(environment: [
                "AWS_CONTAINER_CREDENTIALS_FULL_URI": base + "/container",
                "AWS_CONTAINER_AUTHORIZATION_TOKEN": "wrong-one",
            ]))
        let error = await #expect(throws: S3Error.self) { try await store.credentials() }
        #expect(error?.code == .missingCredentials && error?.status == 401)
        #expect(error?.message.contains("container: GET \(base)/container answered 401") == true, "\(error!)")
        #expect(error?.message.contains("wrong-one") == false)
        // A header that would end the request's headers never leaves.
        let broken = try peers.store(
            .container(environment: [
                "AWS_CONTAINER_CREDENTIALS_FULL_URI": base + "/container",
                "AWS_CONTAINER_AUTHORIZATION_TOKEN": "a\r\nX: b",
            ]))
        await #expect(throws: S3Error.self) { try await broken.credentials() }
        #expect(try await peers.stats(id)["refused"] == 1)
        // A redirect is never followed: the token never goes where it leads, and its answer is refused.
        let redirected = try peers.store(
            .container(environment: [
                "AWS_CONTAINER_CREDENTIALS_FULL_URI": base + "/redirect",
                "AWS_CONTAINER_AUTHORIZATION_TOKEN": "container-token",
            ]))
        let refusal = await #expect(throws: S3Error.self) { try await redirected.credentials() }
        #expect(
            refusal?.message.contains("GET \(base)/redirect answered 302 (a redirect, which is never followed)")
                == true,
            "\(refusal!)")
        #expect(try await peers.stats(id)["container"] == nil, "the redirect's target was asked")
    }

    /// IMDSv2's session token goes to the endpoint asked and nowhere else: a redirect to another origin is the
    /// answer (refused), as botocore takes it, and the other origin never sees the token.
    @Test func theInstanceMetadataTokenNeverFollowsARedirect() async throws {
        let peers = try CredentialPeers.shared()
        let (id, base) = peers.base()
        let store = try peers.store(
            .instanceMetadata(environment: ["AWS_EC2_METADATA_SERVICE_ENDPOINT": base + "/moved/"]))
        let error = await #expect(throws: S3Error.self) { try await store.credentials() }
        #expect(error?.status == 307 && error?.message.contains("never followed") == true, "\(error!)")
        let asked = try await peers.stats(id)
        #expect(asked["imds-token"] == 1 && asked["captured"] == nil && asked["token-captured"] == nil, "\(asked)")
    }

    /// A credential endpoint's whole answer, not only its head, must come within the provider's timeout: one that
    /// sends its head and then trickles its body is cut there, not after the trickle (1,200 bytes, 120 s). The
    /// timeout is the test's signal, not a clock; the trickle is long so that a machine too busy to close the
    /// connection for a while still closes it before the trickle's end (30 s was not enough under four busy loops
    /// per core).
    @Test func aTricklingAnswerIsCutAtTheTimeout() async throws {
        let peers = try CredentialPeers.shared()
        let (id, base) = peers.base()
        let (deadline, passes) = AsyncStream<Void>.makeStream()
        let fetcher = CredentialFetcher { _ in
            for await _ in deadline { return }
            throw CancellationError()
        }
        let provider = S3CredentialProvider.container(environment: [
            "AWS_CONTAINER_CREDENTIALS_FULL_URI": base + "/trickle",
            "AWS_CONTAINER_AUTHORIZATION_TOKEN": "container-token",
        ])
        let fetch = Task { try await provider.fetch(fetcher) }
        // The head has come and the body trickles: the old bound (the head's) has passed.
        while try await peers.stats(id)["trickled", default: 0] < 3 { try await Task.sleep(for: .milliseconds(50)) }
        passes.yield()
        let error = await #expect(throws: S3Error.self) { try await fetch.value }
        #expect(error?.message == "container: GET \(base)/trickle gave no whole answer within 5.0 seconds", "\(error!)")
        #expect(try await peers.stats(id)["trickled", default: 0] < 1200, "the fetch waited for the trickle to end")
    }

    @Test(arguments: [
        ("http://127.0.0.1:9/creds", true), ("http://127.1.2.3/creds", true), ("http://localhost/creds", true),
        ("http://[::1]/creds", true), ("http://169.254.170.2/v2/credentials", true),
        ("http://169.254.170.23/v1/credentials", true), ("http://[fd00:ec2::23]/v1/credentials", true),
        ("https://creds.example.com/", true), ("http://creds.example.com/", false), ("http://10.0.0.1/", false),
        ("http://127.0.0.1.example.com/", false), ("file:///etc/passwd", false),
        // Names and literals that begin like loopback but are not (the review's: a named host, resolved).
        ("http://127.x.attacker.example/", false), ("http://127.0.0.attacker/", false), ("http://127.1/", false),
        ("http://0127.0.0.1/", false), ("http://127.0.0.256/", false), ("http://127.0.0.1x/", false),
        ("http://localhost.attacker.example/", false), ("http://[::ffff:127.0.0.1]/", false),
        ("http://127.255.255.254/", true), ("http://[0:0:0:0:0:0:0:1]/", true),
    ])
    func aContainerURIGoesOverHTTPOnlyToThisMachineOrTheAgent(uri: String, allowed: Bool) throws {
        let made = Result { try ContainerCredentials(environment: ["AWS_CONTAINER_CREDENTIALS_FULL_URI": uri]) }
        switch made {
        case .success(let container): #expect(allowed && container?.url == uri)
        case .failure(let error): #expect(!allowed && "\(error)".contains("AWS_CONTAINER_CREDENTIALS_FULL_URI"))
        }
        let relative = try ContainerCredentials(environment: ["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/c?id=1"])
        #expect(relative?.url == "http://169.254.170.2/v2/c?id=1")
    }

    @Test func instanceMetadataIsAskedWithASessionTokenOnly() async throws {
        let peers = try CredentialPeers.shared()
        let (id, base) = peers.base()
        let store = try peers.store(.instanceMetadata(environment: ["AWS_EC2_METADATA_SERVICE_ENDPOINT": base + "/"]))
        _ = try await peers.upload(small, through: store)
        #expect(try await peers.stats(id) == ["imds-token": 1, "imds": 1, "issued": 1])
        #expect(InstanceMetadataCredentials(environment: ["AWS_EC2_METADATA_DISABLED": "TRUE"]) == nil)
    }

    @Test func aWebIdentityIsExchangedAtSTSForKeysMotoChecks() async throws {
        let peers = try CredentialPeers.shared()
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let tokenFile = folder.url.appendingPathComponent("token").path
        try Data("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6dXBsb2FkcyJ9.c2ln\n".utf8)
            .write(to: URL(fileURLWithPath: tokenFile))
        let environment = [
            "AWS_WEB_IDENTITY_TOKEN_FILE": tokenFile, "AWS_ROLE_ARN": peers.role, "AWS_ROLE_SESSION_NAME": "uploads",
            "AWS_ENDPOINT_URL_STS": peers.s3.absoluteString,
        ]
        let store = try peers.store(.webIdentity(environment: environment))
        let credentials = try await store.credentials()
        #expect(credentials.accessKeyID.hasPrefix("ASIA") && credentials.sessionToken?.isEmpty == false)
        #expect(credentials.expiration.map { $0 > Date() } == true)
        _ = try await peers.upload(small, through: store)
        // Without its session token the same keys are refused: moto checks what the provider fetched.
        var withoutToken = credentials
        withoutToken.sessionToken = nil
        await #expect(throws: MultipartError.self) {
            _ = try await peers.upload(small, through: try peers.store(.static(withoutToken)))
        }
    }

    @Test func profilesComeFromBothFilesTheCredentialsFileWinning() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let config = folder.url.appendingPathComponent("config").path
        let credentialsFile = folder.url.appendingPathComponent("credentials").path
        try Data(
            """
            # the config file
            [default]
            region = eu-west-3
            aws_access_key_id = CONFIG_DEFAULT
            aws_secret_access_key = config-secret
            [profile uploads]
            aws_access_key_id = CONFIG_UPLOADS
            aws_secret_access_key = config-uploads-secret
            aws_session_token = config-token
            s3 =
              max_concurrent_requests = 4
            [profile assumed]
            role_arn = arn:aws:iam::123456789012:role/r
            source_profile = default
            [sso-session corp]
            aws_access_key_id = NOT_A_PROFILE
            """.utf8
        ).write(to: URL(fileURLWithPath: config))
        try Data(
            """
            ; the credentials file
            [uploads]
            AWS_ACCESS_KEY_ID = CREDENTIALS_UPLOADS
            aws_secret_access_key=credentials-uploads-secret
            [keyonly]
            aws_access_key_id = K
            """.utf8
        ).write(to: URL(fileURLWithPath: credentialsFile))
        let environment = [
            "AWS_CONFIG_FILE": config, "AWS_SHARED_CREDENTIALS_FILE": credentialsFile, "HOME": "/nowhere",
        ]
        func read(_ name: String?, _ extra: [String: String] = [:]) throws -> S3Credentials? {
            try ProfileFiles(name: name, environment: environment.merging(extra) { $1 }).credentials()
        }
        #expect(try read(nil) == S3Credentials(accessKeyID: "CONFIG_DEFAULT", secretAccessKey: "config-secret"))
        #expect(
            try read(nil, ["AWS_PROFILE": "uploads"])
                == S3Credentials(
                    accessKeyID: "CREDENTIALS_UPLOADS", secretAccessKey: "credentials-uploads-secret",
                    sessionToken: "config-token"))
        #expect(try read("corp") == nil, "an sso-session section is not a profile")
        #expect(try read("absent") == nil)
        #expect(throws: S3Error.self) { try read("keyonly") }
        do {
            _ = try read("assumed")
            Issue.record("an assume-role profile read as keys")
        } catch let error as S3Error {
            #expect(
                error.message == "profile assumed has no aws_access_key_id (it uses role_arn, which is not read here)")
        }
        let home = ProfileFiles(name: nil, environment: ["HOME": "/home/u", "AWS_CONFIG_FILE": "~/cfg"])
        #expect(home.credentialsPath == "/home/u/.aws/credentials" && home.configPath == "/home/u/cfg")
    }

    @Test func theChainTakesTheFirstProviderSetUpAndStopsAtOneThatFails() async throws {
        let peers = try CredentialPeers.shared()
        let (id, base) = peers.base()
        let empty = try TemporaryFolder()
        defer { empty.remove() }
        var environment = [
            "HOME": empty.url.path, "AWS_EC2_METADATA_SERVICE_ENDPOINT": base + "/",
            "AWS_CONTAINER_CREDENTIALS_FULL_URI": base + "/container",
            "AWS_CONTAINER_AUTHORIZATION_TOKEN": "container-token",
            "AWS_ACCESS_KEY_ID": "ENVIRONMENT", "AWS_SECRET_ACCESS_KEY": "s",
        ]
        func first() async throws -> S3Credentials {
            try await peers.store(.default(environment: environment)).credentials()
        }
        #expect(try await first().accessKeyID == "ENVIRONMENT")
        #expect(try await peers.stats(id).isEmpty, "the environment's keys are taken before any endpoint is asked")
        environment["AWS_ACCESS_KEY_ID"] = nil
        #expect(try await first().accessKeyID.hasPrefix("AKIA"))
        let asked = try await peers.stats(id)
        #expect(asked["container"] == 1 && asked["imds"] == nil)
        // A container endpoint that refuses stops the chain: it does not fall through to the instance's role.
        environment["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = "wrong"
        await #expect(throws: S3Error.self) { try await first() }
        #expect(try await peers.stats(id)["imds"] == nil)
        // Nothing set up: one error naming each provider and why.
        let none = ["HOME": empty.url.path, "AWS_EC2_METADATA_DISABLED": "true"]
        let error = await #expect(throws: S3Error.self) {
            try await peers.store(.default(environment: none)).credentials()
        }
        #expect(error?.code == .missingCredentials)
        for name in ["environment", "web identity", "profile default", "container", "instance metadata"] {
            #expect(error?.message.contains("\(name): ") == true, "\(error!)")
        }
    }

    /// 64 requests at once against the container endpoint make one fetch, and the keys are kept for the next 64.
    /// (That a renewal is shared too is shown without a clock, in ``CredentialCacheTests``.)
    @Test func concurrentRequestsShareOneFetch() async throws {
        let peers = try CredentialPeers.shared()
        let (id, base) = peers.base()
        let store = try peers.store(
            .container(environment: [
                "AWS_CONTAINER_CREDENTIALS_FULL_URI": base + "/container",
                "AWS_CONTAINER_AUTHORIZATION_TOKEN": "container-token",
            ]))
        func askAtOnce() async throws -> Set<String> {
            try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<64 { group.addTask { try await store.credentials().accessKeyID } }
                return try await group.reduce(into: []) { $0.insert($1) }
            }
        }
        let first = try await askAtOnce()
        #expect(first.count == 1)
        #expect(try await askAtOnce() == first, "kept: an hour is left")
        #expect(try await peers.stats(id)["container"] == 1)
    }

    /// Keys that live 900 s, renewed 300 s before they expire, on a clock the test moves (the peer's, by which it
    /// deletes a key from moto's IAM when it expires, and the store's cache's): a form's first file is stored with
    /// the first key; the clock moves 700 s on and the second file's first part is signed with a key renewed then;
    /// the clock moves 300 s on, which deletes the first key; the rest of the form arrives and completes. The same
    /// form at the same time keeping its first key (a provider that says it never expires) is refused once that
    /// key is deleted: the renewal is what mended it. No step waits for a real clock: each waits for the peer to
    /// have seen what it needs. The time limit stops a hang only: under four busy loops a core the test ran past
    /// three minutes.
    @Test(.timeLimit(.minutes(10))) func keysThatExpireMidUploadAreRenewedAndTheUploadCompletes() async throws {
        let peers = try CredentialPeers.shared()
        var random = SeededGenerator(seed: 4040)
        let bytes = random.bytes(12 << 20)
        let environment = { (base: String) in
            [
                "AWS_CONTAINER_CREDENTIALS_FULL_URI": base + "/container",
                "AWS_CONTAINER_AUTHORIZATION_TOKEN": "container-token",
            ]
        }
        let (id, base) = peers.base(lifetime: 900)
        var renewing = S3CredentialProvider.container(environment: environment(base))
        renewing.refreshBefore = 300
        let (keptID, keptBase) = peers.base(lifetime: 900)
        let once = S3CredentialProvider.container(environment: environment(keptBase))
        let kept = S3CredentialProvider(name: "kept") {
            var credentials = try #require(try await once.fetch(CredentialFetcher()))
            credentials.expiration = nil
            return credentials
        }
        let offset = NIOLockedValueBox<TimeInterval>(0)  // the test's clock, which the renewing store's cache reads
        func advance(by seconds: Int) async throws -> (renewing: [String: Int], kept: [String: Int]) {
            offset.withLockedValue { $0 += TimeInterval(seconds) }
            return (try await peers.advance(id, by: seconds), try await peers.advance(keptID, by: seconds))
        }
        let renewingStore = try peers.store(renewing) { Date().addingTimeInterval(offset.withLockedValue { $0 }) }

        // The form: a small file, then `bytes`. Cut after the small file, the next part's head and the first bytes
        // of `bytes` (as many as the form's closing delimiter has), and after the next 6 MiB (a whole part of 5 MiB).
        var form = MultipartBody()
        try form.append(.data(Data(repeating: 0x61, count: 1000), name: "first", filename: "a.txt"))
        try form.append(.data(Data(bytes), name: "file", filename: "f.bin"))
        let (body, contentType) = (try form.bytes(), form.contentType)
        let head = body.count - bytes.count
        let cuts = [0, head, head + (6 << 20), body.count]
        let (renewingChunks, renewingFeed) = AsyncStream<[UInt8]>.makeStream()
        let (keptChunks, keptFeed) = AsyncStream<[UInt8]>.makeStream()
        func feed(_ piece: Int) {
            for feed in [renewingFeed, keptFeed] {
                feed.yield(Array(body[cuts[piece]..<cuts[piece + 1]]))
                if piece + 2 == cuts.count { feed.finish() }
            }
        }
        async let renewed = peers.spool(renewingChunks, contentType, bytes, through: renewingStore)
        async let refused = peers.spool(keptChunks, contentType, bytes, through: try peers.store(kept))

        feed(0)  // the small file: stored by both with their first keys
        try await peers.wait(id, until: "issued", reaches: 1)
        try await peers.wait(keptID, until: "issued", reaches: 1)
        let due = try await advance(by: 700)  // 200 s left: due for renewal, not expired
        #expect(due.renewing["revoked"] == nil && due.kept["revoked"] == nil, "\(due)")
        feed(1)  // a whole part: the renewing store fetches new keys to sign it
        try await peers.wait(id, until: "issued", reaches: 2)
        let expired = try await advance(by: 300)  // the first keys expire, and moto forgets them
        #expect(expired.renewing["revoked"] == 1 && expired.kept["revoked"] == 1, "\(expired)")
        feed(2)  // the rest, and the form's end

        _ = try await renewed
        #expect(try await peers.stats(id) == ["container": 2, "issued": 2, "revoked": 1])
        do {
            _ = try await refused
            Issue.record("an upload signed with a deleted key was stored")
        } catch let error as MultipartError {
            let cause = try #require(error.cause as? S3Error, "\(error)")
            #expect(cause.status == 403 && cause.serviceCode == "InvalidAccessKeyId", "\(cause)")
        }
    }
}

/// The cache's rule when a renewal fails: kept credentials with more than a fifth of the renewal margin to live
/// serve on (logged, and no new fetch for ten seconds); closer to their expiration the failure is thrown.
@Suite struct CredentialCacheTests {
    /// A provider that answers `first`, then fails every time, counting its calls.
    final class Failing: Sendable {
        let calls = NIOLockedValueBox(0)
        func provider(_ first: S3Credentials, refreshBefore: TimeInterval) -> S3CredentialProvider {
            var provider = S3CredentialProvider(name: "failing") {
                let call = self.calls.withLockedValue { calls in
                    calls += 1
                    return calls
                }
                guard call == 1 else { throw S3Error(code: .missingCredentials, message: "the endpoint is down") }
                return first
            }
            provider.refreshBefore = refreshBefore
            return provider
        }
    }

    /// Credentials due for renewal, asked for by 64 requests while the provider has not answered: one fetch, and
    /// every request gets its answer. The provider answers only once all 64 wait, so no clock decides it.
    @Test(.timeLimit(.minutes(2))) func oneRenewalServesEveryRequestWaiting() async throws {
        let calls = NIOLockedValueBox(0)
        let (released, release) = AsyncStream<Void>.makeStream()
        var provider = S3CredentialProvider(name: "gated") {
            let call = calls.withLockedValue { calls in
                calls += 1
                return calls
            }
            if call > 1 { for await _ in released { break } }  // the renewal waits to be let go
            // Always due: an hour left, renewed two hours before.
            return S3Credentials(
                accessKeyID: "K\(call)", secretAccessKey: "s", expiration: Date().addingTimeInterval(3600))
        }
        provider.refreshBefore = 7200
        let cache = CredentialCache(provider: provider, fetcher: CredentialFetcher(), logger: .disabled)
        #expect(try await cache.current().accessKeyID == "K1")
        let keys = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<64 { group.addTask { try await cache.current().accessKeyID } }
            while await cache.waiting < 64 { try await Task.sleep(for: .milliseconds(5)) }
            release.yield()
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        let fetches = await cache.fetches
        #expect(keys == ["K2"] && calls.withLockedValue { $0 } == 2 && fetches == 2)
    }

    @Test func keptCredentialsServeAfterAFailedRenewalOnlyWhileFarFromExpiring() async throws {
        let logs = InMemoryLogHandler()
        let logger = Logger(label: "s3", factory: { _ in logs })
        // Due at once (an hour left, renewed two hours before), but an hour is more than two hours / 5: they serve on.
        let far = S3Credentials(accessKeyID: "FAR", secretAccessKey: "s", expiration: Date().addingTimeInterval(3600))
        let failing = Failing()
        let cache = CredentialCache(
            provider: failing.provider(far, refreshBefore: 7200), fetcher: CredentialFetcher(),
            logger: logger, retryAfterFailure: 3600)
        #expect(try await cache.current() == far)
        #expect(try await cache.current() == far, "the renewal failed; the kept keys serve")
        #expect(try await cache.current() == far)
        #expect(failing.calls.withLockedValue { $0 } == 2, "no new fetch until retryAfterFailure has passed")
        #expect(logs.entries.contains { "\($0.message)".contains("could not be renewed") && $0.level == .warning })

        // A minute left, under two hours / 5: a request signed now may arrive too late, so the failure is thrown.
        let near = S3Credentials(accessKeyID: "NEAR", secretAccessKey: "s", expiration: Date().addingTimeInterval(60))
        let nearCache = CredentialCache(
            provider: Failing().provider(near, refreshBefore: 7200), fetcher: CredentialFetcher(),
            logger: logger)
        #expect(try await nearCache.current() == near)
        await #expect(throws: S3Error.self) { try await nearCache.current() }
    }
}

/// Where the web identity provider asks STS: the endpoint variables, else STS in the region the store reads.
@Suite struct CredentialSettingsTests {
    @Test func webIdentityAsksSTSWhereTheVariablesSay() throws {
        let base = ["AWS_WEB_IDENTITY_TOKEN_FILE": "/t", "AWS_ROLE_ARN": "arn:aws:iam::1:role/r"]
        func endpoint(_ extra: [String: String]) throws -> String {
            try #require(WebIdentityCredentials(environment: base.merging(extra) { $1 })).endpoint
        }
        #expect(try endpoint([:]) == "https://sts.us-east-1.amazonaws.com")
        #expect(try endpoint(["AWS_DEFAULT_REGION": "eu-west-3"]) == "https://sts.eu-west-3.amazonaws.com")
        #expect(try endpoint(["AWS_REGION": "ap-south-1", "AWS_DEFAULT_REGION": "eu-west-3"]).contains("ap-south-1"))
        #expect(
            try endpoint(["AWS_ENDPOINT_URL": "http://127.0.0.1:5000/", "AWS_REGION": "x"]) == "http://127.0.0.1:5000")
        #expect(
            try endpoint(["AWS_ENDPOINT_URL_STS": "http://127.0.0.1:6000", "AWS_ENDPOINT_URL": "http://127.0.0.1:5000"])
                == "http://127.0.0.1:6000")
        #expect(WebIdentityCredentials(environment: ["AWS_ROLE_ARN": "arn"]) == nil, "no token file: not set up")
    }
}
