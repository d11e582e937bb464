import AsyncHTTPClient
import Foundation

/// The proxy `multipart send` goes through, read as curl reads `-x` and the proxy environment variables.
///
/// `-x [scheme://][user:password@]host[:port]`: `http://` (the default) or `socks5://`/`socks5h://`; the port is 1080
/// when none is given, as curl's. Without `-x`, `http_proxy` (lower case only, as curl reads it) for an `http`
/// URL, `https_proxy` or `HTTPS_PROXY` for an `https` one, else `all_proxy` or `ALL_PROXY`; none for a host that
/// `--noproxy` or else `no_proxy`/`NO_PROXY` names (a comma-separated list of hosts and domains, `*` for every
/// host). AsyncHTTPClient tunnels through an HTTP proxy with `CONNECT` for `http` and `https` URLs alike (curl's
/// `--proxytunnel`).
struct ProxySetting: Hashable {
    enum Kind: Hashable { case http, socks }

    var kind: Kind
    var host: String
    var port: Int
    var user: String?
    var password: String?

    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    /// The proxy `text` names, or nil for the empty text (`-x ""`: no proxy).
    init?(parsing text: String) throws {
        guard !text.isEmpty else { return nil }
        var rest = Substring(text)
        kind = .http
        if let range = rest.range(of: "://") {
            switch rest[..<range.lowerBound].lowercased() {
            case "http": kind = .http
            case "socks5", "socks5h": kind = .socks
            default: throw Invalid(description: "proxy \(text.debugDescription): only http:// and socks5:// proxies")
            }
            rest = rest[range.upperBound...]
        }
        rest = rest.prefix { $0 != "/" }
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            let colon = credentials.firstIndex(of: ":") ?? credentials.endIndex
            user = String(credentials[..<colon]).removingPercentEncoding
            password =
                colon == credentials.endIndex
                ? ""
                : String(credentials[credentials.index(after: colon)...])
                    .removingPercentEncoding
            rest = rest[rest.index(after: at)...]
        }
        let colon =
            rest.hasPrefix("[") ? rest.firstIndex(of: "]").map { rest.index(after: $0) } : rest.lastIndex(of: ":")
        if let colon, colon < rest.endIndex, rest[colon] == ":" {
            guard let port = Int(rest[rest.index(after: colon)...]), (1...65535).contains(port) else {
                throw Invalid(description: "proxy \(text.debugDescription): the port is not a number from 1 to 65535")
            }
            self.port = port
            rest = rest[..<colon]
        } else {
            port = 1080
        }
        host = String(rest.trimmingPrefix("[").prefix { $0 != "]" })
        guard !host.isEmpty else { throw Invalid(description: "proxy \(text.debugDescription) names no host") }
    }

    /// The proxy for `url`: `option` (`-x`) when given, else the environment's, unless `noProxy` (`--noproxy`, else
    /// the environment's `no_proxy`) names the URL's host.
    static func forURL(
        _ url: URL, option: String?, noProxy: String?, environment: [String: String]
    ) throws -> ProxySetting? {
        let host = (url.host ?? "").lowercased()
        let exempt = noProxy ?? environment["no_proxy"] ?? environment["NO_PROXY"] ?? ""
        for entry in exempt.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) {
            let domain = entry.hasPrefix(".") ? String(entry.dropFirst()) : entry
            if entry == "*" || host == domain || host.hasSuffix("." + domain) { return nil }
        }
        if let option { return try ProxySetting(parsing: option) }
        let names =
            url.scheme?.lowercased() == "https"
            ? ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] : ["http_proxy", "all_proxy", "ALL_PROXY"]
        guard let text = names.lazy.compactMap({ environment[$0] }).first else { return nil }
        return try ProxySetting(parsing: text)
    }

    /// The proxy in AsyncHTTPClient's terms.
    var configuration: HTTPClient.Configuration.Proxy {
        switch kind {
        case .socks: .socksServer(host: host, port: port)
        case .http:
            .server(
                host: host, port: port,
                authorization: user.map { .basic(username: $0, password: password ?? "") })
        }
    }
}
