import Foundation
import StreamingMultipart

func readForm(
    _ requestBody: some AsyncSequence<[UInt8], any Error>, contentType: String, file: FileHandle
) async throws -> [String: String] {
    var fields: [String: String] = [:]
    for try await part in try requestBody.multipartParts(contentType: contentType) {
        if part.head.isFile {
            for try await bytes in part.body { try file.write(contentsOf: bytes) }
        } else {
            fields[part.head.name] = String(decoding: try await part.body.collect(upTo: 64 * 1024), as: UTF8.self)
        }
    }
    return fields
}
