import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import StreamingMultipart

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
        next(afterFailure: Self.transientReason(error))
    }

    /// Why an error is worth another attempt, or nil: the connection failed, was refused, reset, closed early or
    /// timed out. A DNS failure, a TLS failure and the body's own errors are not.
    static func transientReason(_ error: any Error) -> String? {
        switch error {
        case let error as HTTPClientError:
            let transient: [HTTPClientError] = [
                .remoteConnectionClosed, .connectTimeout, .readTimeout, .writeTimeout, .getConnectionFromPoolTimeout,
            ]
            return transient.contains(error) ? "\(error)" : nil
        case let error as NIOConnectionError:
            return error.connectionErrors.isEmpty ? nil : "connection failed (\(error.connectionErrors[0].error))"
        case let error as IOError:
            let transient = [ECONNREFUSED, ECONNRESET, EPIPE, ETIMEDOUT, ENETUNREACH, EHOSTUNREACH, ECONNABORTED]
            return transient.contains(error.errnoCode) ? "\(error)" : nil
        case let error as ChannelError:
            switch error {
            case .connectTimeout, .ioOnClosedChannel, .outputClosed, .eof: return "\(error)"
            default: return nil
            }
        default:
            return nil
        }
    }
}
