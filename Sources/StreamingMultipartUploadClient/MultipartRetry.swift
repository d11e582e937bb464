package import Foundation

/// When and how often a one-call upload tries again, curl's `--retry` as the model: after a connection failure
/// (refused, reset, closed early, a timeout) or an answer of 408, 429 or 5xx (but 501 and 505, which no retry
/// changes), waiting `Retry-After` when the server sends it, else a backoff that doubles.
///
/// The uploads of `StreamingMultipartAsyncHTTPClient` and `StreamingMultipartURLSession` take it, and `S3Store` for its
/// requests; a retry sends the whole body again, produced anew from its parts, so only a body that can be produced
/// again is retried (`MultipartBody.isReproducible`, in the core).
///
/// ```swift
/// let retry = MultipartRetry(attempts: 3)  // waits 1 s, 2 s, 4 s, or what Retry-After says, at most 10 minutes
/// ```
public struct MultipartRetry: Sendable, Hashable {
    /// The most attempts after the first; 0 for none.
    public var attempts: Int
    /// The wait before the first retry; it doubles for each next one, up to ``maxDelay``.
    public var initialDelay: Duration
    /// The longest wait between attempts, a `Retry-After` answer included.
    public var maxDelay: Duration
    /// Whether every failure is tried again, not only the transient ones: any answer of 400 or more and any error
    /// of the transport (cancellation aside), as curl's `--retry-all-errors`. For a server that fails at random;
    /// a refusal that will not change is then sent again until the attempts are used up. False by default.
    public var retriesEveryError = false

    /// No retry.
    public static let none = MultipartRetry(attempts: 0)

    /// Up to `attempts` retries, waiting `initialDelay`, then twice that each time, at most `maxDelay`
    /// (curl's `--retry`: 1 s, doubling, at most 10 minutes).
    public init(attempts: Int, initialDelay: Duration = .seconds(1), maxDelay: Duration = .seconds(600)) {
        self.attempts = max(0, attempts)
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
    }

    /// The wait before a retry when `used` retries came before it, or nil when none is left.
    package func backoff(afterRetries used: Int) -> Duration? {
        guard used < attempts else { return nil }
        return min(initialDelay * (1 << min(used, 30)), maxDelay)
    }

    /// The wait a response asks for: its `Retry-After` when it has a readable one (capped at ``maxDelay``), else
    /// `backoff`.
    package func delay(retryAfter value: String?, backoff: Duration, now: Date = Date()) -> Duration {
        min(value.flatMap { Self.retryAfter($0, now: now) } ?? backoff, maxDelay)
    }

    /// Runs `work`, and again after each failure that `isTransient` accepts, waiting the backoff between tries,
    /// until ``attempts`` are used up: then the last failure is thrown. Cancellation ends the wait.
    /// The S3 store's requests run through it; the one-call uploads, which also follow redirects and read
    /// `Retry-After`, through `UploadPlan`, on the same policy.
    ///
    /// When `madeProgress` says a failed try moved the work forward (a resumed upload's append that sent bytes
    /// before its connection dropped), the backoff starts again from ``initialDelay``: that failure is a new one,
    /// not the last one repeated (tus-js-client's rule). The attempts still count: ``attempts`` bounds them all.
    /// `sleep` waits (tests pass one that records the waits instead of taking them).
    ///
    /// ```swift
    /// let answer = try await retry.run(retryingWhen: isTransient) { try await send() }
    /// ```
    package func run<Result>(
        isolation: isolated (any Actor)? = #isolation, retryingWhen isTransient: (any Error) -> Bool,
        madeProgress: () -> Bool = { false },
        sleep: (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        _ work: () async throws -> Result
    ) async throws -> Result {
        var used = 0
        var doublings = 0  // since the last try that made progress
        while true {
            do {
                return try await work()
            } catch let error where !(error is CancellationError) && (retriesEveryError || isTransient(error)) {
                if madeProgress() { doublings = 0 }
                // doublings <= used: the wait is there while an attempt is
                guard used < attempts, let wait = backoff(afterRetries: doublings) else { throw error }
                used += 1
                doublings += 1
                try await sleep(wait)
            }
        }
    }

    /// Whether an answer is to be tried again under this policy: a transient one, or any of 400 or more when
    /// ``retriesEveryError``.
    package func retries(status: Int) -> Bool {
        retriesEveryError ? status >= 400 : Self.isTransient(status: status)
    }

    /// Whether an answer is worth another attempt: 408, 429 and 5xx but 501 and 505.
    package static func isTransient(status: Int) -> Bool {
        status == 408 || status == 429 || (500...599).contains(status) && status != 501 && status != 505
    }

    /// A `Retry-After` value (RFC 9110 §10.2.3): seconds, or an HTTP date; nil when it is neither.
    package static func retryAfter(_ value: String, now: Date) -> Duration? {
        let value = value.trimmingCharacters(in: .whitespaces)
        if !value.isEmpty, value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return .seconds(Int64(value.prefix(9)) ?? 0)
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return .milliseconds(max(0, Int64(date.timeIntervalSince(now) * 1000)))
    }
}
