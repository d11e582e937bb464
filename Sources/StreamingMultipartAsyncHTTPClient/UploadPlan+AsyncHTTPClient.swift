import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import StreamingMultipart
import StreamingMultipartUploadClient

/// The core's `UploadPlan` in AsyncHTTPClient's types: its headers and method as NIO's, and which of
/// AsyncHTTPClient's and NIO's errors are worth another attempt.
extension UploadPlan {
    init(
        url: URL, method: HTTPMethod, headers: HTTPHeaders, bodyIsReproducible: Bool,
        options: HTTPClient.MultipartUploadOptions
    ) {
        self.init(
            url: url, method: method.rawValue, headers: headers.map { ($0.name, $0.value) },
            bodyIsReproducible: bodyIsReproducible, retry: options.retry, maxRedirects: options.maxRedirects,
            allowsInsecureRedirects: options.allowsInsecureRedirects)
    }

    /// The request's headers as NIO's.
    var httpHeaders: HTTPHeaders { HTTPHeaders(headers) }
    /// The request's method as NIO's.
    var httpMethod: HTTPMethod { HTTPMethod(rawValue: method) }

    /// The step after a response's head.
    mutating func next(afterStatus status: Int, headers response: HTTPHeaders, now: Date = Date()) -> Next {
        next(afterStatus: status, header: { response.first(name: $0) }, now: now)
    }

    /// The step after an attempt failed with `error`: a retry, or nil to throw it.
    mutating func next(afterError error: any Error) -> Next? {
        if error is CancellationError || (error as? HTTPClientError) == .cancelled { return nil }
        return next(afterFailure: Self.transientReason(error), description: "\(error)")
    }

    /// Why an error is worth another attempt, in words a person reads ("connection refused (errno 111)"), or nil:
    /// the connection failed, was refused, reset, closed early or timed out. A DNS failure, a TLS failure and the
    /// body's own errors are not.
    static func transientReason(_ error: any Error) -> String? {
        switch error {
        case let error as HTTPClientError:
            switch error {
            case .remoteConnectionClosed: return "the server closed the connection"
            case .connectTimeout: return "connecting timed out"
            case .readTimeout: return "the answer timed out"
            case .writeTimeout: return "sending timed out"
            case .getConnectionFromPoolTimeout: return "no connection was free in time"
            default: return nil
            }
        case let error as NIOConnectionError:
            return error.connectionErrors.first.map { transientReason($0.error) ?? "connecting failed" }
        case let error as IOError:
            let transient = [ECONNREFUSED, ECONNRESET, EPIPE, ETIMEDOUT, ENETUNREACH, EHOSTUNREACH, ECONNABORTED]
            guard transient.contains(error.errnoCode) else { return nil }
            return "\(String(cString: strerror(error.errnoCode)).lowercased()) (errno \(error.errnoCode))"
        case let error as ChannelError:
            switch error {
            case .connectTimeout: return "connecting timed out"
            case .ioOnClosedChannel, .outputClosed, .eof: return "the connection closed"
            default: return nil
            }
        default:
            return nil
        }
    }
}
