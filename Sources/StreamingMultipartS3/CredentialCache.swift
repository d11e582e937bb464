import Foundation
import Logging

/// A store's credentials, kept between requests and renewed before they expire by one fetch that every request
/// needing them meanwhile waits for.
///
/// ```swift
/// let cache = CredentialCache(provider: .default(), fetcher: CredentialFetcher(), logger: logger)
/// let credentials = try await cache.current()   // fetched at first use, then kept
/// ```
///
/// States: nothing kept; credentials kept (valid until ``refreshBefore`` before their expiration, or for good
/// without one); a renewal running (``renewal``), which the requests that find the kept credentials due wait for.
/// A renewal that fails while the kept credentials have more than ``minimumLeft`` to live leaves them serving,
/// logged, and is not tried again before ``retryAfterFailure``; closer to their expiration, the failure is thrown
/// (a request signed now may arrive after they expired).
actor CredentialCache {
    let provider: S3CredentialProvider
    let fetcher: CredentialFetcher
    let logger: Logger
    /// How long before their expiration credentials are fetched again: the provider's
    /// ``S3CredentialProvider/refreshBefore``.
    var refreshBefore: TimeInterval { provider.refreshBefore }
    /// The least time kept credentials must have left to serve after a failed renewal: a fifth of
    /// ``refreshBefore``, a minute by default.
    var minimumLeft: TimeInterval { provider.refreshBefore / 5 }
    /// How long a failed renewal is not tried again while the kept credentials still serve: ten seconds.
    let retryAfterFailure: TimeInterval
    /// The time that expirations are compared with: the system's, or a test's that moves only when it says.
    let now: @Sendable () -> Date

    private var held: S3Credentials?
    private var renewal: Task<S3Credentials, any Error>?
    private var nextTry: Date?
    /// How many fetches the provider was asked for, and how many requests wait for the renewal running: for the
    /// tests that show concurrent requests share one.
    private(set) var fetches = 0
    private(set) var waiting = 0

    init(
        provider: S3CredentialProvider, fetcher: CredentialFetcher, logger: Logger,
        retryAfterFailure: TimeInterval = 10, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.provider = provider
        self.fetcher = fetcher
        self.logger = logger
        self.retryAfterFailure = retryAfterFailure
        self.now = now
    }

    /// The credentials to sign with now: those kept, unless they are due, else the renewal's.
    ///
    /// - Throws: the provider's error (``S3Error/Code/missingCredentials``) when there are no credentials that
    ///   have not expired.
    func current() async throws -> S3Credentials {
        let now = now()
        if let held {
            let due = held.expiration.map { $0.timeIntervalSince(now) <= refreshBefore } ?? false
            if !due { return held }
            if let nextTry, now < nextTry, canServe(held, at: now) { return held }
        }
        let task = renewal ?? startRenewal()
        waiting += 1
        defer { waiting -= 1 }
        return try await task.value
    }

    private func startRenewal() -> Task<S3Credentials, any Error> {
        fetches += 1
        let task = Task { try await self.renew() }
        renewal = task
        return task
    }

    private func renew() async throws -> S3Credentials {
        defer { renewal = nil }
        do {
            guard let fresh = try await provider.fetch(fetcher) else {
                throw S3Error(code: .missingCredentials, message: "\(provider): \(provider.notSetUp)")
            }
            held = fresh
            nextTry = nil
            return fresh
        } catch {
            nextTry = now().addingTimeInterval(retryAfterFailure)
            guard let held, canServe(held, at: now()) else { throw error }
            logger.warning(
                "S3 credentials could not be renewed; the kept ones serve until shortly before they expire",
                metadata: [
                    "provider": "\(provider)", "accessKeyID": "\(held.accessKeyID)",
                    "expiration": "\(held.expiration.map { "\($0)" } ?? "none")", "error": "\(error)",
                ])
            return held
        }
    }

    /// Whether kept credentials may still sign after a renewal failed: more than ``minimumLeft`` before they expire.
    private func canServe(_ credentials: S3Credentials, at now: Date) -> Bool {
        credentials.expiration.map { $0.timeIntervalSince(now) > minimumLeft } ?? true
    }
}
