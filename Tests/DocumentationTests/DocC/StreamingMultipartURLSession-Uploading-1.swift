import Foundation
import StreamingMultipartURLSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

func uploadReport(_ report: URL, to endpoint: URL, token: String) async throws -> Int {
    var body = MultipartBody()
    try body.append(.text("quarterly", name: "kind"))
    try body.append(.file(at: report, name: "report"))

    var request = URLRequest(url: endpoint)
    request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
    let retry = MultipartRetry(attempts: 3, initialDelay: .seconds(1))
    let (_, response) = try await URLSession.shared.upload(body, for: request, retry: retry) { progress in
        print("\(progress.completedBytes) of \(progress.totalBytes ?? -1) bytes")
    }
    return (response as? HTTPURLResponse)?.statusCode ?? 0
}
