import NIOCore
import StreamingMultipart
import StreamingMultipartServer

/// One upload through the admission: its status when there is no room (503, or 429 for one address's too many),
/// else the spooled form, its bytes counted on its ticket.
func receive(
    _ body: some AsyncSequence<ByteBuffer, any Error> & Sendable, contentType: String, peer: String,
    admission: UploadAdmission, spooler: MultipartSpooler
) async throws -> Result<SpooledForm, UploadAdmission.Refusal> {
    switch admission.admit(peer: peer) {
    case .failure(let refusal):
        return .failure(refusal)
    case .success(let ticket):
        defer { ticket.end() }
        return .success(try await spooler.spool(body.counted(by: ticket), contentType: contentType))
    }
}
