import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import StreamingMultipart
import StreamingMultipartNIO

/// `POST /upload`: streams the request body through the parser into the spooler (never collecting it whole) and
/// answers the form as JSON; the spooled files are removed once the answer is made.
///
/// Every answer closes the connection (`Connection: close`): the server never reads what a client sends after its
/// form, or the rest of a body it refused. Errors are answered with the library's status table
/// (`MultipartError.httpStatus`) and its client message; the whole error, with the spool folder's paths, goes to the
/// log only.
struct UploadService: Sendable {
    let spooler: MultipartSpooler
    /// Which uploads run at once: a limit on all, one per client address, and the slowest cut first when full.
    let admission: UploadAdmission
    /// The most bytes of a field's value (and of a name or filename) echoed in the answer.
    let echoBytes: Int
    let logger: Logger

    func upload(_ request: Request, from peer: String?) async -> Response {
        guard let contentType = request.headers[.contentType] else {
            return answer(.badRequest, ErrorBody(error: .init(code: "invalidContentType", message: "no Content-Type")))
        }
        let ticket: UploadAdmission.Ticket
        switch admission.admit(peer: peer) {
        case .success(let admitted):
            ticket = admitted
        case .failure(let refusal):
            let message = admission.message(for: refusal)
            logger.info("refused an upload from \(peer ?? "?"): \(message)")
            let body = ErrorBody(error: .init(code: refusal.code, message: message))
            return answer(HTTPResponse.Status(code: refusal.status), body, headers: [.retryAfter: "1"])
        }
        defer { ticket.end() }
        do {
            // Counted for the admission's rates; a cut ends the reading at the next buffer (CancellationError).
            let result = try await spooler.withSpooledForm(
                request.body.counted(by: ticket), contentType: contentType,
                contentEncoding: request.headers[.contentEncoding]
            ) { form in
                UploadResult(form, echoBytes: echoBytes)
            }
            return answer(.ok, result)
        } catch _ where ticket.wasCut {
            logger.info("cut a slow upload from \(peer ?? "?") to make room for another")
            let body = ErrorBody(error: .init(code: "busy", message: UploadAdmission.cutMessage))
            return answer(.serviceUnavailable, body, headers: [.retryAfter: "1"])
        } catch let error as MultipartError {
            let status = HTTPResponse.Status(code: error.httpStatus)
            if error.httpStatus >= 500 {
                logger.error("upload failed: \(error)")
            } else {
                logger.info("upload refused: \(error)")
            }
            let body = ErrorBody(
                error: .init(code: error.code.name, message: error.clientMessage, offset: error.offset))
            return answer(status, body, headers: error.httpStatus == 503 ? [.retryAfter: "1"] : [:])
        } catch {
            // The body itself failed (the connection dropped, or the task was cancelled): nobody may be listening.
            logger.info("upload failed reading the request: \(error)")
            let body = ErrorBody(error: .init(code: "bodyFailed", message: "reading the request failed"))
            return answer(.badRequest, body)
        }
    }

    private func answer(_ status: HTTPResponse.Status, _ value: some Encodable, headers: HTTPFields = [:]) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        var fields: HTTPFields = [.contentType: "application/json; charset=utf-8", .connection: "close"]
        fields.append(contentsOf: headers)
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
