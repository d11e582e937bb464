import Foundation
import StreamingMultipart

func makeUploadBody(photo: URL, log: URL, logSize: Int) throws -> MultipartBody {
    var body = MultipartBody()  // a random boundary from the system's CSPRNG
    try body.append(.text("Sunset over the bay", name: "caption"))
    try body.append(.file(at: photo, name: "photo"))  // filename and type inferred; length taken now
    try body.append(.stream(name: "log", filename: "log.txt", length: logSize) { InputStream(url: log)! })
    try body.append(parameters: ["album": ["id": 42, "tags": ["beach", "sunset"]]])  // album[id], album[tags][]
    return body
}
