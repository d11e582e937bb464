import Foundation
import StreamingMultipart
import StreamingMultipartVapor
import Vapor

/// The whole of a small upload app (`swift run SmallVaporUpload`): typed forms (multipart or urlencoded), photos
/// taken by their bytes, errors answered as JSON; the tests run it with a spooler of their own.
public func smallApp(_ app: Application, spooler: MultipartSpooler) {
    struct Upload: Decodable {
        var caption: String
        var photos: [SpooledFile]
    }
    app.useMultipartUploads()
    let images: @Sendable (MultipartStoreFile) -> MultipartFileDecision = { file in  // by the bytes, not the label
        ["image/png", "image/jpeg", "image/gif", "image/webp"].contains(file.sniffedMediaType)
            ? .store : .refuse(status: 415, message: "photos must be PNG, JPEG, GIF or WebP images")
    }
    app.on(.POST, "upload", body: .stream) { req in
        try await req.multipartForm(as: Upload.self, spooler: spooler, fileFilter: images) { upload in
            "\(upload.caption): \(upload.photos.map { "\($0.filename) \($0.byteCount)" }.joined(separator: ", "))\n"
        }
    }
}
