#if Vapor
public import NIOCore
public import Vapor

extension Application {
    /// What an upload server on Vapor needs, in one line: `app.useMultipartUploads()`.
    ///
    /// - Installs ``MultipartErrorMiddleware``, so that every form error is answered as the library's JSON.
    /// - Closes a connection idle for `idleTimeout` (Vapor keeps one open forever unless told), so that idle and
    ///   half-sent connections do not pile up: 60 s by default, longer than the spooler's body rule takes at its
    ///   default (a body that stops is answered 408 within 40 s).
    ///
    /// Vapor 4 has no place for a channel handler of one's own, so the guards below HTTP (a request head's
    /// deadline, a bound on connections, closing instead of reading the rest of a refused body, answering
    /// `Expect: 100-continue`) are for a reverse proxy in front: nginx with `client_header_timeout`,
    /// `limit_conn` and its own 100-continue does each of them.
    public func useMultipartUploads(idleTimeout: TimeAmount = .seconds(60)) {
        http.server.configuration.idleTimeout = idleTimeout
        middleware.use(MultipartErrorMiddleware())
    }
}
#endif
