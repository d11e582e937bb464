import Foundation
import StreamingMultipartURLSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

func makePhotoRequest(photoURL: URL, endpoint: URL, spoolURL: URL) throws -> URLRequest {
    var body = MultipartBody()
    try body.append(.text("Sunset over the bay", name: "caption"))
    try body.append(.file(at: photoURL, name: "photo"))
    var request = URLRequest(url: endpoint)
    try request.setMultipartBody(body, writingTo: spoolURL)  // exact Content-Length on every platform
    return request
}
