// `[PORT=8080] swift run SmallUploadServer [SPOOL_DIR]`: typed forms, SVGs refused, guards on, errors answered.
import Foundation
import Hummingbird
import StreamingMultipart
import StreamingMultipartHummingbird

struct Upload: Decodable {
    var caption: String
    var photos: [SpooledFile]
}

let spooler = MultipartSpooler(directory: CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory())
let noSVG: @Sendable (MultipartStoreFile) -> MultipartFileDecision = { file in
    file.mediaType == "image/svg+xml" ? .refuse(status: 415, message: "SVG images are not taken") : .store
}
let router = Router()
router.post("/upload") { request, _ in
    try await request.multipartForm(as: Upload.self, spooler: spooler, fileFilter: noSVG) { upload in
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
