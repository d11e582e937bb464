import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StreamingMultipart
import StreamingMultipartNIO

/// `POST /upload`: streams the request body through the parser into the spooler (never collecting it whole) and
/// answers the form as JSON; the spooled files are removed once the answer is made.
struct UploadService: Sendable {
    let spooler: MultipartSpooler

    func upload(_ request: Request) async -> Response {
        guard let contentType = request.headers[.contentType] else {
            return answer(.badRequest, ErrorBody(error: .init(code: "invalidContentType", message: "no Content-Type")))
        }
        do {
            let result = try await spooler.withSpooledForm(
                request.body, contentType: contentType, contentEncoding: request.headers[.contentEncoding]
            ) { form in
                UploadResult(form)
            }
            return answer(.ok, result)
        } catch let error as MultipartError {
            let body = ErrorBody(error: .init(code: error.code.name, message: error.message, offset: error.offset))
            return answer(Self.status(for: error), body)
        } catch {
            // The body itself failed (the connection dropped, or the task was cancelled): nobody may be listening.
            let body = ErrorBody(error: .init(code: "bodyFailed", message: "reading the request failed: \(error)"))
            return answer(.badRequest, body)
        }
    }

    /// 413 for a limit, 415 for an encoding, media type or charset the server does not read, 507 for a full disk,
    /// 500 for another write failure, 400 for a malformed body.
    static func status(for error: MultipartError) -> HTTPResponse.Status {
        switch error.code {
        case .limitExceeded: return .contentTooLarge
        case .unsupportedContentEncoding, .unsupportedCharset, .invalidContentType: return .unsupportedMediaType
        case .writeFailed:
            return (error.cause as? SystemCallError)?.errno == ENOSPC ? .init(code: 507) : .internalServerError
        default: return .badRequest
        }
    }

    private func answer(_ status: HTTPResponse.Status, _ value: some Encodable) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
