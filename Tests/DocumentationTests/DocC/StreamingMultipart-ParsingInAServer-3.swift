import StreamingMultipart
import StreamingMultipartCrypto

func keepPhotos(
    _ requestBody: sending some AsyncSequence<[UInt8], any Error>, contentType: String
) async throws -> String? {
    let spooler = MultipartSpooler(directory: "/var/spool/uploads", digest: SHA256Digest.self)
    return try await spooler.withSpooledForm(requestBody, contentType: contentType) { form in
        for photo in form.files(named: "photos") {
            try photo.move(to: "/srv/photos/\(photo.digest!.hex)")
        }
        return form.value(of: "caption")
    }
}
