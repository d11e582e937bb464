public import Foundation

/// Where an ``S3Store`` gets the keys it signs with, and gets them again before they expire: keys given in code,
/// the environment, a profile of the shared `config`/`credentials` files, a container's credential endpoint (ECS,
/// EKS Pod Identity), the instance metadata service (EC2, IMDSv2), or a web identity token exchanged at STS (EKS
/// service accounts), alone or chained in the SDKs' order.
///
/// ```swift
/// // The SDKs' chain: environment, web identity, profile, container, instance metadata.
/// let configuration = try S3Store.Configuration(
///     endpoint: URL(string: "https://s3.eu-west-3.amazonaws.com")!, bucket: "uploads", credentials: .default())
/// // Keys of your own, fetched again before they expire:
/// let vault = S3CredentialProvider(name: "vault") { try await fetchFromVault() }
/// ```
///
/// A store asks its provider once, then keeps the credentials until five minutes before their ``S3Credentials/expiration``
/// (keys without one are kept for good). The fetch that renews them is shared by every request that needs them
/// meanwhile, so a hundred parts in flight make one call to the metadata service, not a hundred. If the renewal
/// fails while the kept keys have more than a minute to live, they go on serving (the failure is logged) and the
/// renewal is tried again ten seconds later; past that, the failure is each request's ``S3Error``.
///
/// In a chain, a provider that is not set up (its variables unset, no such file, `AWS_EC2_METADATA_DISABLED`) lets
/// the next one try; one that is set up but fails stops the chain with its error, rather than signing as another
/// identity than the one the deployment meant. Every provider reads its variables from the `environment` given
/// (the process's by default), once, when it is made.
///
/// Not read: profiles that assume a role (`role_arn`, `source_profile`), SSO and `credential_process`; their profile
/// fails with an error saying so. Give such credentials with ``init(name:_:)``.
public struct S3CredentialProvider: Sendable, CustomStringConvertible {
    /// Fetches credentials; nil when this provider is not set up here (for a chain, with the reason).
    typealias Fetch = @Sendable (CredentialFetcher) async throws -> S3Credentials?

    /// What the provider is, for messages: `environment`, `profile default`, `container`, `chain(…)`.
    public let description: String
    let fetch: Fetch
    /// Why a provider that returns nil is not set up, for the chain's error.
    let notSetUp: String
    /// How long before their expiration the credentials are fetched again: five minutes, as long as a request to
    /// S3 may take to be signed, sent and checked. Shorter in the tests that watch keys expire.
    var refreshBefore: TimeInterval = 300

    init(_ description: String, notSetUp: String, fetch: @escaping Fetch) {
        self.description = description
        self.notSetUp = notSetUp
        self.fetch = fetch
    }

    /// Credentials your code fetches (a secrets manager, a token service): called at first use and again before
    /// the credentials it returned expire (set their ``S3Credentials/expiration``; without one they are kept).
    public init(name: String, _ fetch: @escaping @Sendable () async throws -> S3Credentials) {
        self.init(name, notSetUp: name, fetch: { _ in try await fetch() })
    }

    /// The same keys for good.
    public static func `static`(_ credentials: S3Credentials) -> S3CredentialProvider {
        S3CredentialProvider("static \(credentials.accessKeyID)", notSetUp: "", fetch: { _ in credentials })
    }

    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN` (optional); not set up while the key id
    /// is unset. See ``S3Credentials/environment(_:)``.
    public static func environment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> S3CredentialProvider {
        S3CredentialProvider("environment", notSetUp: "AWS_ACCESS_KEY_ID is not set") { _ in
            guard environment.firstSet("AWS_ACCESS_KEY_ID") != nil else { return nil }
            return try S3Credentials.environment(environment)
        }
    }

    /// A profile of the shared files: `name`, else `AWS_PROFILE`, else `default`, from the credentials file
    /// (`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`, sections `[name]`) and the config file
    /// (`AWS_CONFIG_FILE`, else `~/.aws/config`, sections `[profile name]`, or `[default]`); the credentials file
    /// wins where both have the profile. Not set up while neither file has it. The files are read at each fetch.
    public static func profile(
        _ name: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> S3CredentialProvider {
        let files = ProfileFiles(name: name, environment: environment)
        return S3CredentialProvider("profile \(files.profile)", notSetUp: files.notSetUp) { _ in
            try files.credentials()
        }
    }

    /// A container's credential endpoint: `AWS_CONTAINER_CREDENTIALS_FULL_URI` (https, or http to a loopback or the
    /// ECS/EKS link-local address only), else `http://169.254.170.2` and `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`,
    /// sent the `Authorization` of `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` (read at each fetch) or
    /// `AWS_CONTAINER_AUTHORIZATION_TOKEN`. Not set up while neither URI is set.
    public static func container(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> S3CredentialProvider {
        S3CredentialProvider(
            "container", notSetUp: "neither AWS_CONTAINER_CREDENTIALS_FULL_URI nor _RELATIVE_URI is set"
        ) { fetcher in
            try await ContainerCredentials(environment: environment)?.fetch(with: fetcher)
        }
    }

    /// The instance metadata service, IMDSv2 only (a session token `PUT` first, never the unauthenticated v1):
    /// the first role of `/latest/meta-data/iam/security-credentials/`, at `AWS_EC2_METADATA_SERVICE_ENDPOINT`,
    /// else `http://169.254.169.254`. Not set up when `AWS_EC2_METADATA_DISABLED` is `true`; off EC2 it fails once its
    /// first request has had a second.
    public static func instanceMetadata(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> S3CredentialProvider {
        S3CredentialProvider("instance metadata", notSetUp: "AWS_EC2_METADATA_DISABLED is true") { fetcher in
            try await InstanceMetadataCredentials(environment: environment)?.fetch(with: fetcher)
        }
    }

    /// A web identity token exchanged at STS (`AssumeRoleWithWebIdentity`, unsigned): the token read from
    /// `AWS_WEB_IDENTITY_TOKEN_FILE` at each fetch (Kubernetes rotates it), the role `AWS_ROLE_ARN`, the session
    /// `AWS_ROLE_SESSION_NAME` (else one made up), at `AWS_ENDPOINT_URL_STS`, else `AWS_ENDPOINT_URL`, else STS in
    /// the region the store reads (``S3Store/Configuration/environmentRegion(_:)``). Not set up while the token
    /// file or the role is unset.
    public static func webIdentity(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> S3CredentialProvider {
        S3CredentialProvider(
            "web identity", notSetUp: "AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN are not both set"
        ) { fetcher in
            try await WebIdentityCredentials(environment: environment)?.fetch(with: fetcher)
        }
    }

    /// The first of `providers` that is set up, tried in order at each fetch.
    ///
    /// - Throws: the error of the first provider set up that fails; ``S3Error/Code/missingCredentials`` naming
    ///   each provider and why it was not set up, when none is.
    public static func chain(_ providers: [S3CredentialProvider]) -> S3CredentialProvider {
        let names = providers.map(\.description).joined(separator: ", ")
        return S3CredentialProvider("chain(\(names))", notSetUp: "") { fetcher in
            var reasons: [String] = []
            for provider in providers {
                if let credentials = try await provider.fetch(fetcher) { return credentials }
                reasons.append("\(provider.description): \(provider.notSetUp)")
            }
            throw S3Error(code: .missingCredentials, message: "no credentials: " + reasons.joined(separator: "; "))
        }
    }

    /// The SDKs' default chain: ``environment(_:)``, ``webIdentity(environment:)``, ``profile(_:environment:)``,
    /// ``container(environment:)``, ``instanceMetadata(environment:)``.
    public static func `default`(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> S3CredentialProvider {
        chain([
            .environment(environment), .webIdentity(environment: environment), .profile(environment: environment),
            .container(environment: environment), .instanceMetadata(environment: environment),
        ])
    }
}
