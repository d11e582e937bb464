package import Foundation

/// What a one-call upload sends next, decided after each attempt, for every transport: a value holding the request
/// as it stands (URL, method, headers, whether it carries the body) and the retries and redirects left. The
/// AsyncHTTPClient upload and the URLSession upload both drive one, so both follow the same redirect table.
///
/// The redirect table, curl's `-L` as the model (RFC 9110 §15.4):
///
/// | status | next request |
/// |---|---|
/// | 301, 302 answering a POST; 303 (but for HEAD) | a GET without the body or its headers |
/// | 301, 302 answering another method; 307, 308 | the same method with the whole body, produced again |
///
/// (The body's headers are `Content-Type`, `Content-Length`, `Content-Encoding`, `Transfer-Encoding`, `Expect`.)
///
/// and for every redirect followed, whatever its status:
/// - `Authorization`, `Cookie` and `Proxy-Authorization` are dropped when the scheme, the host or the port changes
///   (an origin once left is never trusted again: they are not restored on a way back);
/// - an `https` request is never redirected to `http` unless `allowsInsecureRedirects`: the redirect is then the
///   answer, as is a `Location` that is missing or not `http`/`https`;
/// - a redirect that would resend a body that cannot be produced again is the answer.
///
/// Transitions, one per way an attempt ends:
/// - a redirect as above → `.redirect`, the request rewritten; none left → `.redirectLimitReached`; no redirect
///   allowed (`maxRedirects` 0) → `.finish`.
/// - 408, 429 or 5xx (but 501 and 505, which no retry changes), retries left, a body that can be sent again →
///   `.retry` after `Retry-After` or the backoff; otherwise → `.finish`.
/// - a transient failure of the connection (the transport says which are), retries left, a body that can be sent
///   again → `.retry` after the backoff; otherwise nil: the transport throws its error.
package struct UploadPlan: Sendable {
    /// The request to send next.
    package private(set) var url: URL
    /// Its method, in capitals.
    package private(set) var method: String
    /// Its headers, in order, as the caller and the body set them.
    package private(set) var headers: [(name: String, value: String)]
    /// False once a 301, 302 or 303 turned the request into a GET.
    package private(set) var sendsBody = true
    /// Retries decided so far.
    package private(set) var retriesUsed = 0

    private let bodyIsReproducible: Bool
    private let retry: MultipartRetry
    private let redirectLimit: Int
    private var redirectsLeft: Int
    private let allowsInsecureRedirects: Bool

    /// The headers that carry credentials: never sent past a change of origin.
    package static let credentialHeaders = ["Authorization", "Cookie", "Proxy-Authorization"]
    /// The headers that describe the body: dropped with it.
    package static let bodyHeaders = [
        "Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding", "Expect",
    ]

    /// What to do after an attempt.
    package enum Next: Equatable, Sendable {
        /// The response is the answer.
        case finish
        /// Wait, then send again.
        case retry(after: Duration, reason: String)
        /// Send to `url` now, as rewritten.
        case redirect(status: Int)
        /// One more redirect than allowed: the transport throws its error for it.
        case redirectLimitReached
    }

    /// - Parameters:
    ///   - maxRedirects: the most redirects followed; 0 returns a redirect as the answer.
    ///   - allowsInsecureRedirects: whether an `https` request may be redirected to `http`.
    package init(
        url: URL, method: String, headers: [(name: String, value: String)], bodyIsReproducible: Bool,
        retry: MultipartRetry, maxRedirects: Int, allowsInsecureRedirects: Bool = false
    ) {
        self.url = url
        self.method = method.uppercased()
        self.headers = headers
        self.bodyIsReproducible = bodyIsReproducible
        self.retry = retry
        self.redirectLimit = max(0, maxRedirects)
        self.redirectsLeft = redirectLimit
        self.allowsInsecureRedirects = allowsInsecureRedirects
    }

    /// The values of a header, any case of its name.
    package func values(of name: String) -> [String] {
        headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    /// The step after a response's head.
    ///
    /// - Parameters:
    ///   - status: the response's status code.
    ///   - header: the response's first value of a header, by name in any case.
    ///   - now: the time a `Retry-After` date is measured from.
    package mutating func next(afterStatus status: Int, header: (String) -> String?, now: Date = Date()) -> Next {
        if redirectLimit > 0, [301, 302, 303, 307, 308].contains(status), let target = redirectTarget(header) {
            guard !sendsBody || !keepsBody(afterRedirect: status) || bodyIsReproducible else { return .finish }
            guard redirectsLeft > 0 else { return .redirectLimitReached }
            redirectsLeft -= 1
            redirect(to: target, status: status)
            return .redirect(status: status)
        }
        guard retry.retries(status: status), let backoff = nextDelay() else { return .finish }
        let delay = retry.delay(retryAfter: header("Retry-After"), backoff: backoff, now: now)
        return .retry(after: delay, reason: "HTTP \(status)")
    }

    /// The step after an attempt failed: a retry when the transport found the failure transient (`reason` names
    /// it), or when the policy retries every error (`description` names it then), or nil to throw it.
    package mutating func next(afterFailure reason: String?, description: @autoclosure () -> String) -> Next? {
        guard let reason = reason ?? (retry.retriesEveryError ? description() : nil), let delay = nextDelay() else {
            return nil
        }
        return .retry(after: delay, reason: reason)
    }

    /// The step after an attempt failed: a retry when the transport found the failure transient, or nil.
    package mutating func next(afterFailure reason: String?) -> Next? {
        next(afterFailure: reason, description: "the attempt failed")
    }

    /// Where a redirect leads, or nil when it is not to be followed: no `Location`, not `http`/`https`, or a step
    /// down from `https` to `http` that was not allowed.
    private func redirectTarget(_ header: (String) -> String?) -> URL? {
        guard let location = header("Location"), let target = URL(string: location, relativeTo: url)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https", target.host != nil
        else { return nil }
        if url.scheme?.lowercased() == "https" && scheme == "http" && !allowsInsecureRedirects { return nil }
        return target
    }

    /// Whether another send may happen: the body, if the request carries it, can be produced again.
    private var canSendAgain: Bool { !sendsBody || bodyIsReproducible }

    /// The backoff before the next retry, counting it; nil when no retry is left or the body cannot be sent again.
    private mutating func nextDelay() -> Duration? {
        guard canSendAgain, let delay = retry.backoff(afterRetries: retriesUsed) else { return nil }
        retriesUsed += 1
        return delay
    }

    /// Whether a redirect keeps the method and body: all but 303 (but for HEAD) and 301/302 answering a POST.
    private func keepsBody(afterRedirect status: Int) -> Bool {
        !(status == 303 && method != "HEAD" || (status == 301 || status == 302) && method == "POST")
    }

    /// Rewrites the request for a redirect, as the table says.
    private mutating func redirect(to target: URL, status: Int) {
        if !keepsBody(afterRedirect: status) {
            method = "GET"
            sendsBody = false
            remove(Self.bodyHeaders)
        }
        if !Self.sameOrigin(target, url) { remove(Self.credentialHeaders) }
        url = target
    }

    private mutating func remove(_ names: [String]) {
        headers.removeAll { header in names.contains { $0.caseInsensitiveCompare(header.name) == .orderedSame } }
    }

    /// Whether two URLs share scheme, host and port (a missing port is the scheme's default).
    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        func port(_ url: URL) -> Int? { url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80) }
        return a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased()
            && port(a) == port(b)
    }
}
