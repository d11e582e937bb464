import AsyncHTTPClient
import StreamingMultipart
import StreamingMultipartAsyncHTTPClient

func upload(_ body: MultipartBody, to url: String, with client: HTTPClient) async throws -> HTTPClientResponse {
    var options = HTTPClient.MultipartUploadOptions()
    options.retry = .init(attempts: 3)  // refused, reset, 408, 429, 5xx; Retry-After honoured
    return try await client.upload(body, to: url, options: options) { progress in
        print("sent \(progress.completedBytes) of \(progress.totalBytes ?? -1) bytes, part \(progress.partIndex ?? -1)")
    }
}
