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
