import Foundation
import StreamingMultipartURLSession  // the core and the URLRequest conveniences

#if canImport(FoundationNetworking)
import FoundationNetworking  // URLSession on Linux
#endif

func uploadStreaming(_ body: MultipartBody, to endpoint: URL) async throws -> (Data, URLResponse) {
    var request = URLRequest(url: endpoint)
    request.httpMethod = "POST"
    request.setMultipartBody(body)  // chunked on Linux; Content-Length on Apple platforms
    return try await URLSession.shared.data(for: request)
}
