import Foundation
import StreamingMultipart
import StreamingMultipartVapor
import Vapor

struct PhotoUpload: Decodable {
    var caption: String
    var photos: [SpooledFile]
}

func registerPhotoRoute(_ app: Application, spooler: MultipartSpooler) {
    // body: .stream, or Vapor collects the whole body in memory before the route runs
    app.on(.POST, "photos", body: .stream) { req async throws -> HTTPStatus in
        try await req.multipartForm(as: PhotoUpload.self, spooler: spooler) { upload in
            for photo in upload.photos {
                try photo.move(to: "/srv/photos/\(UUID().uuidString)-\(photo.safeFilename)")
            }
            return .created
        }
    }
}
