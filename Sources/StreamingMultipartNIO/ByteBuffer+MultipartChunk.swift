public import NIOCore
public import StreamingMultipart

/// A request body of `ByteBuffer`s (Hummingbird's `RequestBody`, Vapor's body stream, any NIO channel) parses and
/// spools as it is:
///
/// ```swift
/// import StreamingMultipart
/// import StreamingMultipartNIO
///
/// for try await part in try request.body.multipartParts(contentType: contentType) { … }
/// let form = try await spooler.spool(request.body, contentType: contentType)
/// ```
///
/// Each buffer's readable bytes are copied once into an array, the parser's input type: the parser hands out the
/// bytes of a part as slices of its input, and a slice must own its storage. The copy runs at memory speed, several
/// times faster than the parse itself and far faster than a network delivers bytes (see
/// `Benchmarks/RESULTS.md`).
extension ByteBuffer: MultipartChunk {
    public var multipartBytes: ArraySlice<UInt8> { [UInt8](readableBytesView)[...] }  // one memcpy
}
