#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension MultipartError {
    /// The HTTP status a server should answer a request with when reading its body failed with this error.
    ///
    /// - 400 Bad Request: the body is malformed (``Code/boundaryNotFound``, ``Code/truncated``,
    ///   ``Code/missingCloseDelimiter``, ``Code/invalidDelimiter``, ``Code/invalidHeader``,
    ///   ``Code/missingContentDisposition``, ``Code/missingName``, ``Code/duplicateHeader``, ``Code/invalidBoundary``,
    ///   ``Code/invalidCompressedData``), or reading it failed (``Code/streamFailed``: the connection dropped).
    /// - 408 Request Timeout: ``Code/timedOut``.
    /// - 413 Content Too Large: ``Code/limitExceeded``.
    /// - 415 Unsupported Media Type: ``Code/invalidContentType`` (not multipart), ``Code/unsupportedContentEncoding``,
    ///   ``Code/unsupportedCharset``.
    /// - 422 Unprocessable Content: ``Code/missingField``, ``Code/invalidField`` (the form does not decode into the
    ///   route's type).
    /// - The status the filter chose: ``Code/fileRefused`` (415 unless it chose another).
    /// - 503 Service Unavailable: ``Code/cancelled`` (the server's task was cancelled, as when it shuts down),
    ///   ``Code/serverBusy`` (a shared budget had no room within its wait), ``Code/storeUnavailable`` (the store
    ///   kept failing past its retries).
    /// - 507 Insufficient Storage: ``Code/insufficientStorage``; ``Code/writeFailed`` with `ENOSPC` or `EDQUOT` as its
    ///   cause.
    /// - 500 Internal Server Error: every other code: the server's own failures (a write that failed otherwise,
    ///   ``Code/invalidLimit``, ``Code/invalidState``) and the builder's, which no request causes.
    ///
    /// ```swift
    /// } catch let error as MultipartError {
    ///     logger.error("\(error)")                                       // the whole story, paths included
    ///     return Response(status: .init(code: error.httpStatus), body: error.clientMessage)
    /// }
    /// ```
    public var httpStatus: Int {
        switch code {
        case .boundaryNotFound, .truncated, .missingCloseDelimiter, .invalidDelimiter, .invalidHeader,
            .missingContentDisposition, .missingName, .invalidName, .duplicateHeader, .invalidBoundary,
            .invalidCompressedData, .streamFailed:
            return 400
        case .timedOut: return 408
        case .limitExceeded: return 413
        case .invalidContentType, .unsupportedContentEncoding, .unsupportedCharset: return 415
        case .missingField, .invalidField: return 422
        case .fileRefused: return refusalStatus ?? 415
        case .cancelled, .serverBusy, .storeUnavailable: return 503
        case .insufficientStorage: return 507
        case .writeFailed:
            let errno = (cause as? SystemCallError)?.errno
            return errno == ENOSPC || errno == EDQUOT ? 507 : 500
        default: return 500
        }
    }

    /// A message fit to send to the client: ``message`` when the error is about what the client sent (a 4xx
    /// ``httpStatus``), and a fixed sentence for the server's own failures, whose messages name its folders and
    /// files (log those, with ``description``).
    public var clientMessage: String {
        if code == .fileRefused { return message }  // the route's own words, whatever status it chose
        return switch httpStatus {
        case 400..<500: message
        case 503: "the server is shutting down or busy; try again later"
        case 507: "the server has no room left for this upload"
        default: "the server could not read or store the upload"
        }
    }
}
