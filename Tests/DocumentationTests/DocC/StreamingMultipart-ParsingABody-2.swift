import Foundation
import StreamingMultipart

func receive<Body: AsyncSequence>(_ body: Body, contentType: String, saveFilesIn folder: URL) async throws
    -> [String: String] where Body.Element: MultipartChunk
{
    var fields: [String: String] = [:]
    for try await part in try body.multipartParts(contentType: contentType) {
        if part.head.isFile {
            let url = folder.appendingPathComponent(UUID().uuidString)
            try Data().write(to: url)
            let handle = try FileHandle(forWritingTo: url)
            defer { try? handle.close() }
            for try await bytes in part.body { try handle.write(contentsOf: Data(bytes)) }
        } else {
            fields[part.head.name] = String(decoding: try await part.body.collect(upTo: 64 * 1024), as: UTF8.self)
        }
    }
    return fields
}
