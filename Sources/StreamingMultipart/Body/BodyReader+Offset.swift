extension BodyReader {
    /// The state a reader of `body` is in once it has produced `offset` bytes, reached without producing them: the
    /// body's layout is walked by length (each part's delimiter and headers, then its content), and the content
    /// that holds `offset` is opened and moved to it (``ContentSource/skip(_:)``).
    static func state(of body: MultipartBody, at offset: Int64, watchesContent: Bool) throws(MultipartError) -> State {
        guard offset >= 0 else {
            throw MultipartError(code: .cannotResume, message: "a body cannot be read from offset \(offset)")
        }
        let boundary = body.boundary
        var start: Int64 = 0  // the offset of what the loop looks at
        for (index, part) in body.parts.enumerated() {
            let headCount = Int64(BodyLayout.headCount(of: part, at: index, boundary: boundary))
            if offset < start + headCount {
                let head = BodyLayout.head(of: part, at: index, boundary: boundary)
                return .head(index: index, bytes: head, sent: Int(offset - start))
            }
            start += headCount
            guard let length = part.content.length else {
                guard offset == start else {
                    throw MultipartError(
                        code: .cannotResume,
                        message: "part \(index + 1) is a stream without a length: the body cannot be read from "
                            + "offset \(offset), past its start at \(start)",
                        offset: offset, partIndex: index)
                }
                return try opened(part, at: index, skipping: 0, offset: offset, watchesContent, boundary)
            }
            if offset < start + length {
                return try opened(part, at: index, skipping: offset - start, offset: offset, watchesContent, boundary)
            }
            start += length
        }
        let close = BodyLayout.closeDelimiter(boundary, afterParts: !body.parts.isEmpty)
        if offset < start + Int64(close.count) { return .close(bytes: close, sent: Int(offset - start)) }
        guard offset == start + Int64(close.count) else {
            throw MultipartError(
                code: .cannotResume,
                message:
                    "the body is \(start + Int64(close.count)) bytes long: it cannot be read from offset \(offset)",
                offset: offset)
        }
        return .finished
    }

    /// Part `index`'s content opened and moved `count` bytes in.
    private static func opened(
        _ part: MultipartPart, at index: Int, skipping count: Int64, offset: Int64, _ watchesContent: Bool,
        _ boundary: MultipartBoundary
    ) throws(MultipartError) -> State {
        if count > 0, !part.content.isReproducible {
            throw MultipartError(
                code: .cannotResume,
                message: "part \(index + 1) is a stream that can be read once: the body cannot be read from offset "
                    + "\(offset), \(count) bytes into it",
                offset: offset, partIndex: index)
        }
        do {
            var source = try ContentSource(opening: part.content)
            do {
                guard watch(for: source, watchesContent, boundary) != nil else {
                    try source.skip(count)
                    return .content(index: index, source, nil)
                }
                // The watch sees the bytes just before `count` too: a boundary may begin there and end after it.
                let behind = min(count, Int64(BoundaryWatch.lookBehind(boundary)))
                try source.skip(count - behind)
                var watch: BoundaryWatch? = BoundaryWatch(boundary: boundary, checked: count - behind)
                var bytes: [UInt8] = []
                while bytes.count < behind {
                    let read = try bytes.append(capacity: Int(behind) - bytes.count) { try source.read(into: &$0) }
                    if read == 0 { break }  // not reached: the content holds `count` bytes or more
                }
                try check(bytes.span.bytes, with: &watch, part: part, index: index, boundary: boundary)
                return .content(index: index, source, watch)
            } catch {
                source.close()
                throw error
            }
        } catch {
            throw MultipartError(locating: error, partIndex: index, offset: offset)
        }
    }
}
