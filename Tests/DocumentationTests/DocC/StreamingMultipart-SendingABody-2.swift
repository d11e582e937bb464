import Foundation
import StreamingMultipartURLSession  // the core and the URLRequest conveniences

#if canImport(FoundationNetworking)
import FoundationNetworking  // URLSession on Linux
#endif

func uploadFromFile(_ body: MultipartBody, to endpoint: URL, spool: URL) async throws -> (Data, URLResponse) {
    var request = URLRequest(url: endpoint)
    request.httpMethod = "POST"
    try request.setMultipartBody(body, writingTo: spool)  // exact Content-Length everywhere
    defer { try? FileManager.default.removeItem(at: spool) }
    return try await URLSession.shared.upload(for: request, fromFile: spool)
}
