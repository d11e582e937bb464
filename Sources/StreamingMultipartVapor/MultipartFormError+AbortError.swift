#if Vapor
public import StreamingMultipart
public import Vapor

/// A form that could not be read or decoded, a Vapor `AbortError`: Vapor's `ErrorMiddleware` answers it with the
/// library's status and a message fit for the client; ``MultipartErrorMiddleware`` answers it with the library's
/// JSON, code and field included.
extension MultipartFormError: AbortError {
    public var status: HTTPResponseStatus { HTTPResponseStatus(statusCode: response.status) }
    public var reason: String { response.message }
    public var headers: HTTPHeaders {
        retryAfterSeconds.map { ["Retry-After": String($0)] } ?? [:]
    }
}

/// Answers a `MultipartFormError` a route throws as JSON, `{"error":{"code","message","field","offset"}}`, with its
/// status and `Retry-After` for 429 and 503; logs the refusal once with the request's logger (its request id), as
/// `MultipartFormError.report(to:)` says: the status, the code, the limit and the whole error. Installed by
/// ``Vapor/Application/useMultipartUploads(idleTimeout:)``.
public struct MultipartErrorMiddleware: AsyncMiddleware {
    public init() {}

    public func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        do {
            return try await next.respond(to: request)
        } catch let error as MultipartFormError {
            error.report(to: request.logger)
            let response = Response(status: error.status, headers: error.headers)
            try response.content.encode(error.response, as: .json)
            return response
        }
    }
}
#endif
