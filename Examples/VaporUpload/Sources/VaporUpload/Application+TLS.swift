import NIOSSL
import Vapor

extension Application {
    /// Serves HTTPS with Vapor's own TLS: the PEM certificate chain at `certificate` and its key at `key`, HTTP/2
    /// chosen by ALPN beside HTTP/1.1 on the same port (what Vapor's HTTP/2 gives, and does not, is in the
    /// README: its streams have none of the product's connection guards).
    ///
    /// ```swift
    /// try app.serveTLS(certificate: "/etc/upload/cert.pem", key: "/etc/upload/key.pem")
    /// ```
    ///
    /// - Throws: NIOSSL's error when either file does not load, before the server starts.
    public func serveTLS(certificate: String, key: String) throws {
        http.server.configuration.tlsConfiguration = .makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
        http.server.configuration.supportVersions = [.one, .two]
    }
}
