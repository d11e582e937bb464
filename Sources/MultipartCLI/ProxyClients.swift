import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers

/// The AsyncHTTPClients one `multipart send` goes through: one per proxy it uses (none included), made when first
/// needed. AsyncHTTPClient sets its proxy per client, and `send` decides the proxy for each request's URL, after
/// each `-L` redirect too, as curl does: a redirect from a host `no_proxy` names to one it does not goes through the
/// proxy, and the other way round goes around it.
final class ProxyClients: Sendable {
    private let configuration: HTTPClient.Configuration
    private let proxy: @Sendable (URL) throws -> ProxySetting?
    private let clients = NIOLockedValueBox<[ProxySetting?: HTTPClient]>([:])

    /// - Parameters:
    ///   - configuration: every client's configuration, its proxy set by `proxy`.
    ///   - proxy: the proxy for a URL, nil for none; it throws `ProxySetting.Invalid` when the setting that URL
    ///     reads cannot be read.
    init(configuration: HTTPClient.Configuration, proxy: @escaping @Sendable (URL) throws -> ProxySetting?) {
        self.configuration = configuration
        self.proxy = proxy
    }

    /// The client of `url`'s proxy; throws `ProxySetting.Invalid` when the setting that URL reads cannot be read (a
    /// broken `https_proxy` fails a send only when a request goes to an `https` URL, as with curl).
    func client(for url: URL) throws -> HTTPClient {
        let setting = try proxy(url)
        return clients.withLockedValue { clients in
            if let client = clients[setting] { return client }
            var configuration = configuration
            configuration.proxy = setting?.configuration
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients[setting] = client
            return client
        }
    }

    /// Shuts every client made down.
    func shutdown() async {
        for client in clients.withLockedValue({ Array($0.values) }) { try? await client.shutdown() }
    }
}
