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
///     for try await bytes in part.body { … }  // ByteBufferView: a view of the buffer the bytes came in
/// }
/// let form = try await spooler.spool(request.body, contentType: contentType)
/// ```
///
/// A buffer lends its storage to the parser, which reads it in place: a part's body comes out as views of the
/// buffers it arrived in (`ByteBufferView`; `ByteBuffer(view)` makes it a buffer, sharing the storage), with no
/// copy. Only the few bytes the parser joins across two buffers (a delimiter's start, a header block) come out
/// copied. The spooler hands a file's bytes to its store the same way, as regions of the buffers.
extension ByteBuffer: MultipartChunk {
    public typealias MultipartSlice = ByteBufferView

    public var multipartBytes: MultipartBytes { LentBuffer.lend(self) }

    /// A view of the buffer `bytes` came in, or of a new buffer for bytes the parser copied. (Not inlinable:
    /// inlined into the parts loop, it made 100,000 small fields 6% slower.)
    public static func multipartSlice(_ bytes: MultipartBytes) -> ByteBufferView {
        let view = bytes.withLender(LentBuffer.self) { owner, range in
            let start = owner.view.startIndex
            return owner.view[(start + range.lowerBound)..<(start + range.upperBound)]
        }
        return view ?? ByteBuffer(bytes: bytes.arraySlice).readableBytesView  // a few bytes the parser joined
    }
}

/// A part's body, parsed in turn (the files inside a `multipart/mixed` part): lent as its buffer is.
extension ByteBufferView: MultipartChunk {
    public typealias MultipartSlice = ByteBufferView

    public var multipartBytes: MultipartBytes { ByteBuffer(self).multipartBytes }

    public static func multipartSlice(_ bytes: MultipartBytes) -> ByteBufferView { ByteBuffer.multipartSlice(bytes) }
}
