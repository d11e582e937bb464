import Foundation
import StreamingMultipart

struct Gallery: Decodable {
    var title: String
    var images: [SpooledFile]
}

/// Receives a gallery of images, taken by what their bytes show: the status to answer and its JSON body.
func receiveGallery<Body: AsyncSequence>(
    _ body: sending Body, contentType: String, spool: String
) async -> (status: Int, body: Data) where Body.Element: MultipartChunk {
    var spooler = MultipartSpooler(directory: spool)
    spooler.fileFilter = { file in
        switch file.sniffedMediaType {  // an SVG or a page called image/png is still markup
        case "image/png", "image/jpeg", "image/gif", "image/webp": .store
        default: .refuse(status: 415, message: "only PNG, JPEG, GIF and WebP images are accepted")
        }
    }
    do {
        let count = try await spooler.withSpooledForm(body, contentType: contentType) { form in
            try MultipartFormDecoder().decode(Gallery.self, from: form).images.count
        }
        return (201, Data("{\"images\":\(count)}".utf8))
    } catch {
        let answer = MultipartErrorResponse(for: error)  // 415 for an SVG, 422 naming a missing title, …
        return (answer.status, (try? JSONEncoder().encode(answer)) ?? Data())
    }
}
