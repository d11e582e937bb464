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

func fieldNames(in body: [UInt8], contentType: String) throws -> [String] {
    var parser = try MultipartParser(contentType: contentType)  // strict mode, safe default limits
    var names: [String] = []
    for start in stride(from: 0, to: body.count, by: 64 * 1024) {
        try parser.append(body[start..<min(start + 64 * 1024, body.count)])
        while let event = try parser.next() {
            switch event {
            case .partHeaders(let head): names.append(head.name)  // head.filename, head.contentType, head.headers
            case .bodyBytes, .partEnd, .end: break
            }
        }
    }
    try parser.finish()  // throws if the close delimiter never came
    return names
}

func receive<Body: AsyncSequence>(_ body: Body, contentType: String, saveFilesIn folder: URL) async throws
    -> [String: String] where Body.Element: MultipartChunk
{
    var fields: [String: String] = [:]
    for try await part in try body.multipartParts(contentType: contentType) {
        if part.head.isFile {
            let url = folder.appendingPathComponent(UUID().uuidString)
            FileManager.default.createFile(atPath: url.path, contents: nil)
            let handle = try FileHandle(forWritingTo: url)
            defer { try? handle.close() }
            for try await bytes in part.body { try handle.write(contentsOf: Data(bytes)) }
        } else {
            fields[part.head.name] = String(decoding: try await part.body.collect(upTo: 64 * 1024), as: UTF8.self)
        }
    }
    return fields
}

func uploadParser(contentType: String) throws -> MultipartParser {
    var limits = MultipartParser.Limits.default
    limits.maxParts = 20
    limits.maxFileBytes = 2 << 30
    return try MultipartParser(contentType: contentType, limits: limits, mode: .lenient)
}

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
