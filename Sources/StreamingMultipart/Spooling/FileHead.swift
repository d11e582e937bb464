/// A file part's first bytes, read before the file is stored, for the ``MultipartSpooler/fileFilter`` and the store
/// to see what the file is whatever the chunks; and the chunks read for them, handed back to be stored in order.
///
/// A first chunk that holds them all (the usual case) is read where it is: the bytes are a view of it, not a copy.
/// Else each chunk read before the last is copied whole into them, those bytes are stored from the copy, and only the
/// last chunk is kept as it came: one lent buffer at most, however finely a client splits the start of a file.
struct FileHead {
    /// What was read and is not stored yet, in order: the chunks before the last, copied, and the last as it came.
    private var unstored: (copied: MultipartBytes?, last: MultipartBytes?) = (nil, nil)

    /// Reads up to `length` bytes of `body`, and returns them; nothing for a `length` of 0.
    mutating func read<Base>(
        _ length: Int, of body: inout MultipartParts<Base>.PartBody.AsyncIterator,
        isolation actor: isolated (any Actor)?
    ) async throws -> MultipartBytes {
        guard length > 0, let slice = try await body.next(isolation: actor) else { return MultipartBytes([]) }
        let chunk = slice.multipartBytes
        unstored.last = chunk
        guard chunk.count < length else { return chunk.prefix(length) }
        var copy: [UInt8] = []
        copy.reserveCapacity(length)
        chunk.withSpan { copy.append(copying: $0.bytes) }
        var copiedBeforeLast = 0
        while copy.count < length, let slice = try await body.next(isolation: actor) {
            copiedBeforeLast = copy.count
            let chunk = slice.multipartBytes
            chunk.withSpan { copy.append(copying: $0.extracting(first: length - copy.count).bytes) }
            unstored.last = chunk
        }
        if copiedBeforeLast > 0 { unstored.copied = MultipartBytes(copy[..<copiedBeforeLast]) }
        return MultipartBytes(copy[...])
    }

    /// The next of the bytes read that are not stored yet; nil once none is left.
    mutating func nextUnstored() -> MultipartBytes? { unstored.copied.take() ?? unstored.last.take() }
}
