import StreamingMultipart
import StreamingMultipartCrypto

/// Keeps an upload's photos under their SHA-256 and returns its caption; every other spooled file is removed.
func receiveUpload<Body: AsyncSequence>(
    _ body: sending Body, contentType: String, contentEncoding: String?, spool: String, photos: String
) async throws -> String? where Body.Element: MultipartChunk {
    var limits = MultipartSpooler.Limits()
    limits.maxFiles = 10
    limits.parser.maxFileBytes = 100 << 20  // 100 MiB a photo
    let spooler = MultipartSpooler(directory: spool, limits: limits, digest: SHA256Digest.self)
    return try await spooler.withSpooledForm(body, contentType: contentType, contentEncoding: contentEncoding) {
        form in
        for photo in form.files(named: "photos") {
            try photo.move(to: "\(photos)/\(photo.digest!.hex)")  // kept: the form no longer removes it
        }
        return form.value(of: "caption")
    }
}
