#if Vapor
public import NIOCore
public import Vapor

extension Application {
    /// What an upload server on Vapor needs, in one line: `app.useMultipartUploads()`.
    ///
    /// - Installs ``MultipartErrorMiddleware``, so that every form error is answered as the library's JSON.
    /// - Closes a connection idle for `idleTimeout` (Vapor keeps one open forever unless told), so that idle and
    ///   half-sent connections do not pile up: 60 s by default, longer than the spooler's body rule takes at its
    ///   default (a body that stops is answered 408 within 40 s). Vapor counts it with NIO's
    ///   `IdleStateHandler(allTimeout:)`, which sees the server's own waits as idleness too: while the spooler waits
    ///   for a slow store it reads nothing, and an upload is cut mid-body when that wait outlasts `idleTimeout`. Set
    ///   it past the store's longest wait (an `S3Store`'s retries: each try's request timeout and its back-off), or
    ///   nil behind a proxy that closes idle connections itself (nginx's `keepalive_timeout`). Hummingbird's
    ///   `.guardedHTTP1` counts only the client's silence while the server waits to read.
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
