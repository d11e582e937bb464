import Foundation
import StreamingMultipart

func makeAlbumBody(thumbnail: Data, photoURL: URL, logURL: URL, logSize: Int) throws -> MultipartBody {
    var body = MultipartBody()  // a random boundary from the system's CSPRNG
    try body.append(.text("Sunset over the bay", name: "caption"))
    try body.append(.data(thumbnail, name: "thumb", filename: "thumb.jpg"))
    try body.append(.file(at: photoURL, name: "photo"))  // filename and type from the URL
    try body.append(.stream(name: "log", filename: "log.txt", length: logSize) { InputStream(url: logURL)! })
    try body.append(parameters: ["album": ["id": 42, "tags": ["beach", "sunset"]]])  // album[id], album[tags][]
    return body
}
