import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import StreamingMultipart
import StreamingMultipartAsyncHTTPClient

func uploadPhoto(_ photoURL: URL, caption: String, client: HTTPClient) async throws -> (HTTPResponseStatus, String) {
    var body = MultipartBody()
    try body.append(.text(caption, name: "caption"))
    try body.append(.file(at: photoURL, name: "photo"))

    var options = HTTPClient.MultipartUploadOptions()
    options.retry = .init(attempts: 3)  // refused, reset, 408, 429, 5xx; Retry-After honoured
    options.timeout = .seconds(60)  // each attempt, until the answer's head
    let response = try await client.upload(body, to: "https://example.com/upload", options: options) { progress in
        print("\(progress.completedBytes) of \(progress.totalBytes ?? -1) bytes")
    }
    return (response.status, String(buffer: try await response.body.collect(upTo: 1 << 20)))
}
