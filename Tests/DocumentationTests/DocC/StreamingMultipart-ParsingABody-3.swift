import StreamingMultipart

nonisolated func fieldNames(inBodyAt path: String, boundary: MultipartBoundary) async throws -> [String] {
    var names: [String] = []
    for try await part in try FileChunks(path: path).multipartParts(boundary: boundary) {
        names.append(part.head.name)  // asking for the next part skips the rest of this body
    }
    return names
}
