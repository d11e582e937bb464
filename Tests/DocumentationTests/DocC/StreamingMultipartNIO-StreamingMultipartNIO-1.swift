import NIOCore
import StreamingMultipart
import StreamingMultipartNIO

/// The field names of a request body of `ByteBuffer`s (Hummingbird's `RequestBody`, Vapor's body stream).
func partNames<Body: AsyncSequence>(of body: Body, contentType: String) async throws -> [String]
where Body.Element == ByteBuffer {
    var names: [String] = []
    for try await part in try body.multipartParts(contentType: contentType) {
        names.append(part.head.name)
    }
    return names
}

/// Each part's body as `ByteBuffer`s that share the request's storage: nothing copied.
func partBuffers<Body: AsyncSequence>(of body: Body, contentType: String) async throws -> [String: [ByteBuffer]]
where Body.Element == ByteBuffer {
    var buffers: [String: [ByteBuffer]] = [:]
    for try await part in try body.multipartParts(contentType: contentType) {
        for try await bytes in part.body {  // LentBytes: a region of a buffer the body arrived in
            buffers[part.head.name, default: []].append(ByteBuffer(bytes))
        }
    }
    return buffers
}
