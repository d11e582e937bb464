// `swift run SmallVaporUpload serve --port 8080`, spooling into the temporary folder (SPOOL_DIR to choose).
import Foundation
import StreamingMultipart
import Vapor
import VaporUpload

let app = try await Application.make(try Environment.detect())
smallApp(app, spooler: MultipartSpooler(directory: Environment.get("SPOOL_DIR") ?? NSTemporaryDirectory()))
try await app.execute()
try await app.asyncShutdown()
