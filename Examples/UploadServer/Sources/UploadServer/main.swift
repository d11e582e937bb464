import Foundation
import Hummingbird
import StreamingMultipart
import StreamingMultipartCrypto

// UploadServer: a form page at GET /, uploads at POST /upload, on 127.0.0.1.

let options: ServerOptions
do {
    options = try ServerOptions(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
    if let message = error.message {
        FileHandle.standardError.write(Data("UploadServer: \(message) (see --help)\n".utf8))
        exit(1)
    }
    print(ServerOptions.usage)
    exit(0)
}

let spoolDirectory: String
let madeSpoolDirectory = options.spoolDirectory == nil
if let given = options.spoolDirectory {
    spoolDirectory = given
} else {
    spoolDirectory =
        FileManager.default.temporaryDirectory.appendingPathComponent("UploadServer-\(UUID().uuidString)")
        .path
    try FileManager.default.createDirectory(
        atPath: spoolDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
}
var isDirectory: ObjCBool = false
guard FileManager.default.fileExists(atPath: spoolDirectory, isDirectory: &isDirectory), isDirectory.boolValue else {
    FileHandle.standardError.write(Data("UploadServer: the spool folder \(spoolDirectory) does not exist\n".utf8))
    exit(1)
}

var limits = MultipartSpooler.Limits()
limits.parser.maxFileBytes = options.maxFileBytes
let service = UploadService(
    spooler: MultipartSpooler(
        directory: spoolDirectory, limits: limits, digest: options.hashes ? SHA256Digest.self : nil))

let router = Router()
router.get("/") { _, _ in
    Response(
        status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
        body: .init(byteBuffer: ByteBuffer(string: FormPage.html)))
}
router.post("/upload") { request, _ in await service.upload(request) }

let app = Application(
    router: router,
    server: .http1(configuration: .init(additionalChannelHandlers: [ContinueHandler()])),
    configuration: .init(address: .hostname("127.0.0.1", port: options.port)),
    onServerRunning: { channel in
        let port = channel.localAddress?.port ?? 0
        // Unbuffered: a test or a script waits for this line to learn the port.
        FileHandle.standardOutput.write(
            Data("UploadServer listening on http://127.0.0.1:\(port)/, spooling to \(spoolDirectory)\n".utf8))
    }
)
try await app.runService()  // until SIGINT or SIGTERM
if madeSpoolDirectory {
    try? FileManager.default.removeItem(atPath: spoolDirectory)  // empty: every upload's files went with its request
}
