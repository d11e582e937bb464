// The README's Swift examples, verbatim: ReadmeTests checks that every ```swift block of README.md stands here
// unchanged, so they compile with the package, and runs them. Edit both together.

import Foundation
import StreamingMultipart

func makeUploadBody(photo: URL, log: URL, logSize: Int64) throws -> MultipartBody {
    var body = MultipartBody()  // a random boundary from the system's CSPRNG
    try body.append(.text("Sunset over the bay", name: "caption"))
    try body.append(.file(at: photo, name: "photo"))  // filename and type inferred; length taken now
    try body.append(.stream({ InputStream(url: log)! }, length: logSize, name: "log", filename: "log.txt"))
    try body.append(parameters: ["album": ["id": 42, "tags": ["beach", "sunset"]]])  // album[id], album[tags][]
    return body
}

func uploadStreaming(_ body: MultipartBody, to endpoint: URL) async throws -> (Data, URLResponse) {
    var request = URLRequest(url: endpoint)
    request.httpMethod = "POST"
    request.setMultipartBody(body)  // chunked on Linux; Content-Length on Apple platforms
    return try await URLSession.shared.data(for: request)
}

func uploadFromFile(_ body: MultipartBody, to endpoint: URL, spool: URL) async throws -> (Data, URLResponse) {
    var request = URLRequest(url: endpoint)
    request.httpMethod = "POST"
    try request.setMultipartBody(body, writingTo: spool)  // exact Content-Length everywhere
    defer { try? FileManager.default.removeItem(at: spool) }
    return try await URLSession.shared.upload(for: request, fromFile: spool)
}

final class UploadDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    let body: MultipartBody

    init(body: MultipartBody) { self.body = body }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, needNewBodyStream completionHandler: @escaping (InputStream?) -> Void
    ) {
        completionHandler(body.makeInputStream())
    }
}

func throttledStream(for body: MultipartBody) -> InputStream {
    body.makeInputStream(throttle: .cellular) { progress in  // 16 KiB packets, 0.2 s apart
        print("sent \(progress.completedBytes) of \(progress.totalBytes ?? -1), part \(progress.partIndex ?? -1)")
    }
}

func send(_ body: MultipartBody, write: ([UInt8]) async throws -> Void) async throws {
    for try await chunk in body.chunks(size: 64 * 1024) {
        try await write(chunk)
    }
}

func copyBody(_ body: MultipartBody, to output: FileHandle) throws -> Int64 {
    var reader = body.makeReader()
    var buffer = [UInt8](repeating: 0, count: 256 * 1024)
    while true {
        let count = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
        if count == 0 { return reader.bytesRead }
        output.write(Data(buffer[..<count]))
    }
}

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
