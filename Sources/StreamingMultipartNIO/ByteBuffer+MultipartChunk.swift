public import NIOCore
public import StreamingMultipart

/// A request body of `ByteBuffer`s (Hummingbird's `RequestBody`, Vapor's body stream, any NIO channel) parses and
/// spools as it is:
///
/// ```swift
/// import StreamingMultipart
/// import StreamingMultipartNIO
///
/// for try await part in try request.body.multipartParts(contentType: contentType) {
///     for try await bytes in part.body {  // LentBytes: a region of the buffer the bytes came in
///         try await writer.write(ByteBuffer(bytes))  // a buffer sharing that storage
///     }
/// }
/// let form = try await spooler.spool(request.body, contentType: contentType)
/// ```
///
/// A buffer lends its storage to the parser, which reads it in place: a part's body comes out as regions of the
/// buffers it arrived in (`LentBytes`), with no copy, and `ByteBuffer(_:)` makes one a buffer
/// that shares the storage. Only the few bytes the parser joins across two buffers (a delimiter's start, a header
/// block) come out copied. The spooler hands a file's bytes to its store the same way, as regions of the buffers.
extension ByteBuffer: MultipartChunk {
    public typealias MultipartSlice = LentBytes

    public var multipartBytes: MultipartBytes { LentBuffer.lend(self) }

    public static func multipartSlice(_ bytes: consuming MultipartBytes) -> LentBytes { LentBytes(bytes) }
}

/// A view is lent as its buffer is.
extension ByteBufferView: MultipartChunk {
    public typealias MultipartSlice = LentBytes

    public var multipartBytes: MultipartBytes { ByteBuffer(self).multipartBytes }

    public static func multipartSlice(_ bytes: consuming MultipartBytes) -> LentBytes { LentBytes(bytes) }
}

extension ByteBuffer {
    /// A part's body bytes as a buffer: a slice of the buffer they were lent from, sharing its storage, or a new
    /// buffer for bytes the parser copied.
    ///
    /// ```swift
    /// for try await bytes in part.body { try await writer.write(ByteBuffer(bytes)) }
    /// ```
    public init(_ bytes: LentBytes) {
        let slice = bytes.withLender(LentBuffer.self) { owner, range in
            owner.buffer.getSlice(at: owner.buffer.readerIndex + range.lowerBound, length: range.count)
        }
        self = slice.flatMap { $0 } ?? ByteBuffer(bytes: bytes)
    }
}
