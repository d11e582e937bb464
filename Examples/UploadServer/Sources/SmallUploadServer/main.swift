// `[PORT=8080] swift run SmallUploadServer [SPOOL_DIR]`: typed forms, photos by their bytes, guards on, errors answered.
import Foundation
import Hummingbird
import StreamingMultipart
import StreamingMultipartHummingbird

struct Upload: Decodable {
    var caption: String
    var photos: [SpooledFile]
}

let spooler = MultipartSpooler(directory: CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory())
let images: @Sendable (MultipartStoreFile) -> MultipartFileDecision = { file in  // by the bytes, not the label
    ["image/png", "image/jpeg", "image/gif", "image/webp"].contains(file.sniffedMediaType)
        ? .store : .refuse(status: 415, message: "photos must be PNG, JPEG, GIF or WebP images")
}
let router = Router()
router.post("/upload") { request, context in
    try await request.multipartForm(as: Upload.self, context: context, spooler: spooler, fileFilter: images) { upload in
        "\(upload.caption): \(upload.photos.map { "\($0.filename) \($0.byteCount)" }.joined(separator: ", "))\n"
    }
}
let port = Int(ProcessInfo.processInfo.environment["PORT"] ?? "") ?? 8080
let app = Application(
    router: router, server: .guardedHTTP1(), configuration: .init(address: .hostname("127.0.0.1", port: port)),
    onServerRunning: { channel in
        let port = channel.localAddress?.port ?? 0
        FileHandle.standardOutput.write(Data("listening on http://127.0.0.1:\(port)/\n".utf8))
    })
try await app.runService()
