#if Hummingbird
import Foundation
public import Hummingbird
public import StreamingMultipart

/// A form that could not be read or decoded, answered as JSON by Hummingbird itself when a route throws it:
/// `{"error":{"code","message","field","offset"}}` with the library's status, `Connection: close` (so that the
/// rest of a refused body is never read, with
/// ``HummingbirdCore/HTTPServerBuilder/guardedHTTP1(guards:idleTimeout:resumableUploads:)``), and `Retry-After: 1`
/// for 429 and 503. The refusal is logged once, with the request context's logger (its request id), as
/// `MultipartFormError.report(to:)` says.
extension MultipartFormError: HTTPResponseError {
    public var status: HTTPResponse.Status { HTTPResponse.Status(code: response.status) }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        report(to: context.logger)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .connection: "close"]
        if let seconds = retryAfterSeconds { headers[.retryAfter] = String(seconds) }
        let body = try encoder.encode(response)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
#endif
