public import NIOCore
public import StreamingMultipart
import StreamingMultipartNIO

extension MultipartSpooler {
    /// The core's `MultipartSpooler.withDecodedForm(as:_:contentType:…)` for a server's
    /// body of buffers, with a route's `fileFilter` (when given) in place of the spooler's, and counted by an
    /// ``UploadAdmission/Ticket`` when one is given: an upload the admission cut to make room fails with `503 busy`
    /// and `Retry-After`. The server integrations' `request.multipartForm(as:…)` call it.
    ///
    /// ```swift
    /// let ticket = try admission.ticket(for: peer)   // 429 or 503 when there is no room
    /// defer { ticket.end() }
    /// try await spooler.withDecodedForm(as: Upload.self, body, contentType: type, countedBy: ticket) { upload in … }
    /// ```
    public func withDecodedForm<T: Decodable & Sendable, Body: AsyncSequence, Result>(
        as type: T.Type, _ body: sending Body, contentType: String?, contentEncoding: String? = nil,
        decoder: MultipartFormDecoder = MultipartFormDecoder(),
        fileFilter: (@Sendable (MultipartStoreFile) -> MultipartFileDecision)? = nil,
        countedBy ticket: UploadAdmission.Ticket?, isolation: isolated (any Actor)? = #isolation,
        _ work: (T) async throws -> Result
    ) async throws -> Result where Body.Element == ByteBuffer {
        var spooler = self
        if let fileFilter { spooler.fileFilter = fileFilter }
        guard let ticket else {
            return try await spooler.withDecodedForm(
                as: T.self, body, contentType: contentType, contentEncoding: contentEncoding, decoder: decoder,
                work)
        }
        do {
            return try await spooler.withDecodedForm(
                as: T.self, body.counted(by: ticket), contentType: contentType, contentEncoding: contentEncoding,
                decoder: decoder, work)
        } catch let error as MultipartFormError where ticket.wasCut {
            let busy = MultipartErrorResponse(status: 503, code: "busy", message: UploadAdmission.cutMessage)
            throw MultipartFormError(response: busy, underlying: error.underlying)
        }
    }
}

extension UploadAdmission {
    /// A slot for an upload from `peer`, or the answer to refuse it with: 429 past the address's share, 503 when
    /// every slot is held (both with `Retry-After`). End the ticket when the upload is done.
    public func ticket(for peer: String?) throws(MultipartFormError) -> Ticket {
        switch admit(peer: peer) {
        case .success(let ticket):
            return ticket
        case .failure(let refusal):
            let answer = MultipartErrorResponse(
                status: refusal.status, code: refusal.code, message: message(for: refusal))
            throw MultipartFormError(response: answer, underlying: refusal)
        }
    }
}
