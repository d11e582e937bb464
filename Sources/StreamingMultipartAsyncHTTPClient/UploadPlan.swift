import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import StreamingMultipart

/// What an upload sends next, decided after each attempt: a value holding the request as it stands (URL, method,
/// headers, whether it carries the body) and the retries and redirects left.
///
/// Transitions, one per way an attempt ends:
/// - a response that asks for a redirect (301, 302, 303, 307, 308 with a `Location`) → with no redirect allowed, or
///   a body that the redirect would resend and that cannot be produced again, `.finish`; redirects left,
///   `.redirect`, the request rewritten as curl's `-L` does; none left, the error `redirectLimitReached`.
/// - a response of 408, 429 or 5xx (but 501 and 505, which no retry changes), retries left, a body that can be
///   produced again → `.retry` after `Retry-After` or the backoff; otherwise → `.finish`.
/// - an error of the connection (refused, reset, closed early, a timeout), retries left, a reproducible body →
///   `.retry` after the backoff; otherwise, and for every other error (the body's own among them) → nil: throw it.
struct UploadPlan {
    /// The request to send next.
    private(set) var url: URL
    private(set) var method: HTTPMethod
    private(set) var headers: HTTPHeaders
    /// False once a 301/302/303 turned the request into a GET.
    private(set) var sendsBody = true

    private let bodyIsReproducible: Bool
    private let retry: MultipartUploadOptions.Retry
    /// Retries decided so far.
    private(set) var retriesUsed = 0
    /// The most redirects followed; 0 returns a redirect as the answer.
    private let redirectLimit: Int
    private var redirectsLeft: Int

    /// What to do after an attempt.
    enum Next: Equatable {
        /// The response is the answer.
        case finish
        /// Wait, then send again.
        case retry(after: Duration, reason: String)
        /// Send to ``UploadPlan/url`` now, as rewritten.
        case redirect(status: Int)
    }

    init(url: URL, method: HTTPMethod, headers: HTTPHeaders, bodyIsReproducible: Bool, options: MultipartUploadOptions)
    {
        self.url = url
        self.method = method
        self.headers = headers
        self.bodyIsReproducible = bodyIsReproducible
        self.retry = options.retry
        self.redirectLimit = max(0, options.maxRedirects)
        self.redirectsLeft = redirectLimit
    }

    /// Whether another send may happen: the body, if the request carries it, can be produced again.
    private var canSendAgain: Bool { !sendsBody || bodyIsReproducible }

    /// The step after a response's head.
    ///
    /// - Throws: `HTTPClientError.redirectLimitReached` past the redirect limit, as AsyncHTTPClient does.
    mutating func next(afterStatus status: Int, headers response: HTTPHeaders, now: Date = Date()) throws -> Next {
        if redirectLimit > 0, [301, 302, 303, 307, 308].contains(status),
            let location = response.first(name: "Location"),
            let target = URL(string: location, relativeTo: url)?.absoluteURL, ["http", "https"].contains(target.scheme)
        {
            guard !sendsBody || !keepsBody(afterRedirect: status) || bodyIsReproducible else { return .finish }
            guard redirectsLeft > 0 else { throw HTTPClientError.redirectLimitReached }
            redirectsLeft -= 1
            redirect(to: target, status: status)
            return .redirect(status: status)
        }
        guard MultipartRetry.isTransient(status: status), let backoff = nextDelay() else { return .finish }
        let delay = retry.delay(retryAfter: response.first(name: "Retry-After"), backoff: backoff, now: now)
        return .retry(after: delay, reason: "HTTP \(status)")
    }

    /// The step after an attempt failed with `error`: a retry, or nil to throw it.
    mutating func next(afterError error: any Error) -> Next? {
        guard let reason = Self.transientReason(error), let delay = nextDelay() else { return nil }
        return .retry(after: delay, reason: reason)
    }

    /// The backoff before the next retry, counting it; nil when no retry is left or the body cannot be sent again.
    private mutating func nextDelay() -> Duration? {
        guard canSendAgain, let delay = retry.backoff(afterRetries: retriesUsed) else { return nil }
        retriesUsed += 1
        return delay
    }

    /// Whether a redirect keeps the method and body: all but 303 (but for HEAD) and 301/302 answering a POST.
    private func keepsBody(afterRedirect status: Int) -> Bool {
        !(status == 303 && method != .HEAD || (status == 301 || status == 302) && method == .POST)
    }

    /// Rewrites the request for a redirect as curl's `-L` does.
    private mutating func redirect(to target: URL, status: Int) {
        if !keepsBody(afterRedirect: status) {
            method = .GET
            sendsBody = false
            for name in ["Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding", "Expect"] {
                headers.remove(name: name)
            }
        }
        if target.scheme != url.scheme || target.host != url.host || target.port != url.port {
            for name in ["Authorization", "Cookie", "Proxy-Authorization"] { headers.remove(name: name) }
        }
        url = target
    }

    /// Why an error is worth another attempt, or nil: the connection failed, was refused, reset, closed early or
    /// timed out. A DNS failure, a TLS failure and the body's own errors are not.
    static func transientReason(_ error: any Error) -> String? {
        switch error {
        case let error as HTTPClientError:
            let transient: [HTTPClientError] = [
                .remoteConnectionClosed, .connectTimeout, .readTimeout, .writeTimeout, .getConnectionFromPoolTimeout,
            ]
            return transient.contains(error) ? "\(error)" : nil
        case let error as NIOConnectionError:
            return error.connectionErrors.isEmpty ? nil : "connection failed (\(error.connectionErrors[0].error))"
        case let error as IOError:
            let transient = [ECONNREFUSED, ECONNRESET, EPIPE, ETIMEDOUT, ENETUNREACH, EHOSTUNREACH, ECONNABORTED]
            return transient.contains(error.errnoCode) ? "\(error)" : nil
        case let error as ChannelError:
            switch error {
            case .connectTimeout, .ioOnClosedChannel, .outputClosed, .eof: return "\(error)"
            default: return nil
            }
        default:
            return nil
        }
    }
}
