import Foundation
import StreamingMultipart
import StreamingMultipartVapor
import Vapor

/// The whole of a small upload app (`swift run SmallVaporUpload`): typed forms (multipart or urlencoded), SVGs
/// refused, errors answered as JSON; the tests run it with a spooler of their own.
public func smallApp(_ app: Application, spooler: MultipartSpooler) {
    struct Upload: Decodable {
        var caption: String
        var photos: [SpooledFile]
    }
    app.useMultipartUploads()
    let noSVG: @Sendable (MultipartStoreFile) -> MultipartFileDecision = { file in
        file.mediaType == "image/svg+xml" ? .refuse(status: 415, message: "SVG images are not taken") : .store
    }
    app.on(.POST, "upload", body: .stream) { req in
        try await req.multipartForm(as: Upload.self, spooler: spooler, fileFilter: noSVG) { upload in
            "\(upload.caption): \(upload.photos.map { "\($0.filename) \($0.byteCount)" }.joined(separator: ", "))\n"
        }
    }
}
