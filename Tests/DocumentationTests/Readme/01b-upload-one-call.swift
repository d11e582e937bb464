import Foundation
import StreamingMultipartURLSession  // the core and the URLRequest conveniences

#if canImport(FoundationNetworking)
import FoundationNetworking  // URLSession on Linux
#endif

func upload(_ body: MultipartBody, to endpoint: URL) async throws -> (Data, URLResponse) {
    let request = URLRequest(url: endpoint)  // sent as POST
    let retry = MultipartRetry(attempts: 3)  // refused, lost, 408, 429, 5xx; Retry-After honoured
    return try await URLSession.shared.upload(body, for: request, retry: retry) { progress in
        print("sent \(progress.completedBytes) of \(progress.totalBytes ?? -1) bytes")
    }
}
