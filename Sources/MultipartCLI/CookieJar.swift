import Foundation

/// The cookies of `multipart send`'s `-b` and `-c`, read and written as curl does: the Netscape cookie file format
/// (one cookie a line: domain, include-subdomains, path, secure, expiry in Unix seconds (0 for a session cookie),
/// name and value, tab-separated; `#HttpOnly_` before the domain of an HttpOnly cookie; `#` lines are comments),
/// and `Set-Cookie:` lines in a file of headers.
///
/// The cookies go with the first request as one `Cookie` header; a redirect to another origin drops it, as it
/// drops every credential.
struct CookieJar {
    struct Cookie: Equatable {
        var domain: String
        var includesSubdomains: Bool
        var path: String
        var secure: Bool
        /// Unix seconds; 0 for a session cookie.
        var expires: Int64
        var name: String
        var value: String
        var httpOnly = false
    }

    private(set) var cookies: [Cookie] = []

    init() {}

    /// The cookies of a file in the Netscape format, or of `Set-Cookie:` header lines (for `host`).
    init(file text: String, host: String) {
        for line in text.split(whereSeparator: \.isNewline).map(String.init) {
            if line.lowercased().hasPrefix("set-cookie:") {
                if let cookie = Self.setCookie(String(line.dropFirst("set-cookie:".count)), host: host) {
                    add(cookie)
                }
                continue
            }
            var fields = line
            var httpOnly = false
            if fields.hasPrefix("#HttpOnly_") {
                fields.removeFirst("#HttpOnly_".count)
                httpOnly = true
            } else if fields.hasPrefix("#") {
                continue
            }
            let parts = fields.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 7, let expires = Int64(parts[4]) else { continue }
            add(
                Cookie(
                    domain: parts[0], includesSubdomains: parts[1].uppercased() == "TRUE", path: parts[2],
                    secure: parts[3].uppercased() == "TRUE", expires: expires, name: parts[5], value: parts[6],
                    httpOnly: httpOnly))
        }
    }

    /// Adds `cookie`, in place of one of the same name, domain and path.
    mutating func add(_ cookie: Cookie) {
        cookies.removeAll { $0.name == cookie.name && $0.domain == cookie.domain && $0.path == cookie.path }
        cookies.append(cookie)
    }

    /// The `Cookie` header value for `url` at `now`: the cookies whose domain, path, scheme and expiry allow it
    /// (a `Secure` cookie over https, or to a loopback host), in curl's order; nil when none does. An IP address
    /// matches only a cookie of that very address: `.0.0.1` is no domain of `127.0.0.1`.
    func header(for url: URL, now: Date = Date()) -> String? {
        let host = (url.host ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        let hostIsAddress = Self.isIPAddress(host)
        let path = url.path.isEmpty ? "/" : url.path
        // A loopback host is a secure context over http too, as browsers and curl 7.79 and later read it.
        let secure =
            url.scheme?.lowercased() == "https" || ["localhost", "127.0.0.1", "::1"].contains(host)
            || host.hasSuffix(".localhost")
        let sent = cookies.filter { cookie in
            let domain = String(cookie.domain.lowercased().trimmingPrefix("."))
            let domainMatches =
                host == domain
                || !hostIsAddress && (cookie.includesSubdomains || cookie.domain.hasPrefix("."))
                    && host.hasSuffix("." + domain)
            let pathMatches =
                path == cookie.path || path.hasPrefix(cookie.path.hasSuffix("/") ? cookie.path : cookie.path + "/")
            let alive = cookie.expires == 0 || cookie.expires > Int64(now.timeIntervalSince1970)
            return domainMatches && pathMatches && (secure || !cookie.secure) && alive
        }
        // As curl orders them: longer paths first (RFC 6265 §5.4), then longer domains, longer names, older ones.
        func key(_ cookie: Cookie, _ index: Int) -> (Int, Int, Int, Int) {
            (-cookie.path.count, -cookie.domain.count, -cookie.name.count, index)
        }
        let ordered = sent.enumerated().sorted { key($0.element, $0.offset) < key($1.element, $1.offset) }
        return sent.isEmpty ? nil : ordered.map { "\($0.element.name)=\($0.element.value)" }.joined(separator: "; ")
    }

    /// A `Set-Cookie` value (RFC 6265 §5.2) as the cookie it sets for `host`: `Domain`, `Path`, `Max-Age` (before
    /// `Expires`), `Secure` and `HttpOnly` read; nil for one without `name=`, and for one whose `Domain` the host
    /// may not set, as curl refuses it (RFC 6265 §5.3 steps 5 and 6):
    /// - a domain the host is not, nor inside (`Domain=victim.example` from `127.0.0.1` or from `a.example`);
    /// - a bare top-level domain (`Domain=com`): curl without a public-suffix list refuses any domain without a
    ///   dot but `localhost`;
    /// - any domain but the address itself from an IP address (`Domain=.0.0.1` from `127.0.0.1`); the address
    ///   itself makes a cookie of that host only.
    static func setCookie(_ value: String, host requestHost: String, now: Date = Date()) -> Cookie? {
        let host = requestHost.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        let attributes = value.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let first = attributes.first, let equals = first.firstIndex(of: "="), equals != first.startIndex else {
            return nil
        }
        var cookie = Cookie(
            domain: host, includesSubdomains: false, path: "/", secure: false, expires: 0,
            name: String(first[..<equals]), value: String(first[first.index(after: equals)...]))
        var maxAge: Int64?
        for attribute in attributes.dropFirst() {
            let (name, text) =
                attribute.firstIndex(of: "=").map {
                    (attribute[..<$0].lowercased(), String(attribute[attribute.index(after: $0)...]))
                } ?? (attribute.lowercased(), "")
            switch name {
            case "domain" where !text.isEmpty:
                let domain = String(text.lowercased().trimmingPrefix("."))
                if domain == host {
                    // The host's own name: a domain cookie of it, but for an address (host-only) or a bare name.
                    guard !isIPAddress(host), domain.contains(".") else { continue }
                } else {
                    guard !isIPAddress(host), host.hasSuffix("." + domain),
                        domain.contains(".") || domain == "localhost"
                    else { return nil }
                }
                cookie.domain = "." + domain
                cookie.includesSubdomains = true
            case "path" where text.hasPrefix("/"): cookie.path = text
            case "max-age": maxAge = Int64(text)
            case "expires": cookie.expires = Self.httpDate(text).map { Int64($0.timeIntervalSince1970) } ?? 0
            case "secure": cookie.secure = true
            case "httponly": cookie.httpOnly = true
            default: break
            }
        }
        if let maxAge { cookie.expires = maxAge <= 0 ? 1 : Int64(now.timeIntervalSince1970) + maxAge }
        return cookie
    }

    /// Whether `host` (without brackets) is an IP address: IPv6 has colons, IPv4 is four decimal numbers.
    static func isIPAddress(_ host: String) -> Bool {
        if host.contains(":") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy {
                !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber)
            }
    }

    /// The jar in the Netscape format, as `curl -c` writes it: the cookies not expired at `now`.
    func netscapeFile(now: Date = Date()) -> String {
        var text = "# Netscape HTTP Cookie File\n# Written by multipart send. Edit at your own risk.\n\n"
        for cookie in cookies where cookie.expires == 0 || cookie.expires > Int64(now.timeIntervalSince1970) {
            let flag = cookie.includesSubdomains ? "TRUE" : "FALSE"
            let fields = [
                (cookie.httpOnly ? "#HttpOnly_" : "") + cookie.domain, flag, cookie.path,
                cookie.secure ? "TRUE" : "FALSE",
                String(cookie.expires), cookie.name, cookie.value,
            ]
            text += fields.joined(separator: "\t") + "\n"
        }
        return text
    }

    private static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in [
            "EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE, dd-MMM-yyyy HH:mm:ss zzz",
        ] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}
