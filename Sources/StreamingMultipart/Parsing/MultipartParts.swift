public import Foundation

/// A chunk of body bytes the async layer can parse: `[UInt8]` and `ArraySlice<UInt8>` without a copy, `Data`
/// with one.
public protocol MultipartChunk {
    /// The chunk's bytes.
    var multipartBytes: ArraySlice<UInt8> { get }
}

extension Array: MultipartChunk where Element == UInt8 {
    public var multipartBytes: ArraySlice<UInt8> { self[...] }
}

extension ArraySlice: MultipartChunk where Element == UInt8 {
    public var multipartBytes: ArraySlice<UInt8> { self }
}

extension Data: MultipartChunk {
    public var multipartBytes: ArraySlice<UInt8> { [UInt8](self)[...] }
}

extension AsyncSequence where Element: MultipartChunk {
    /// The parts of the multipart body this sequence of chunks carries, each with its headers and its body as an
    /// async sequence of byte chunks.
    ///
    /// ```swift
    /// for try await part in request.body.multipartParts(boundary: boundary) {
    ///     if part.head.isFile {
    ///         for try await bytes in part.body { try file.write(contentsOf: bytes) }
    ///     } else {
    ///         let value = try await part.body.collect(upTo: 64 * 1024)
    ///     }
    /// }
    /// ```
    ///
    /// Backpressure: chunks are pulled only as the caller asks for parts and bytes, and asking for the next part
    /// skips what is left of the current body. Cancellation reaches the source through its own `next()`; the parts
    /// sequence closes nothing it did not open. Parts and their bodies are read from one task, in order.
    ///
    /// The source is not pulled past the chunk that holds the close delimiter: the body is complete there, and a
    /// client that keeps sending an epilogue cannot keep the server reading. Pass `readsEpilogue: true` to read the
    /// source to its end (checking the close delimiter's line and skipping the epilogue, within
    /// ``MultipartParser/Limits/maxBodyBytes``).
    ///
    /// A compressed body (`contentEncoding`: gzip, x-gzip or deflate) is inflated a block at a time as parts
    /// and bytes are asked for, under ``MultipartParser/Limits/maxDecompressedBytes`` and
    /// ``MultipartParser/Limits/maxDecompressionRatio``.
    ///
    /// - Throws: ``MultipartError/Code/invalidLimit`` for a limit below 1;
    ///   ``MultipartError/Code/unsupportedContentEncoding`` for another coding.
    public func multipartParts(
        boundary: MultipartBoundary, contentEncoding: String? = nil, limits: MultipartParser.Limits = .default,
        mode: MultipartParser.Mode = .strict, readsEpilogue: Bool = false
    ) throws -> MultipartParts<Self> {
        MultipartParts(
            base: self, parser: try MultipartParser(boundary: boundary, limits: limits, mode: mode),
            encoding: try ContentEncoding(headerValue: contentEncoding), readsEpilogue: readsEpilogue)
    }

    /// The parts of the body, with the boundary read from a `Content-Type` value.
    ///
    /// - Throws: what ``MultipartBoundary/init(contentType:)`` throws; ``MultipartError/Code/invalidLimit``;
    ///   ``MultipartError/Code/unsupportedContentEncoding``.
    public func multipartParts(
        contentType: String, contentEncoding: String? = nil, limits: MultipartParser.Limits = .default,
        mode: MultipartParser.Mode = .strict, readsEpilogue: Bool = false
    ) throws -> MultipartParts<Self> {
        try multipartParts(
            boundary: try MultipartBoundary(contentType: contentType), contentEncoding: contentEncoding,
            limits: limits, mode: mode, readsEpilogue: readsEpilogue)
    }
}

/// The parts of a multipart body arriving as an async sequence of chunks; see
/// `AsyncSequence.multipartParts(boundary:limits:mode:)`.
public struct MultipartParts<Base: AsyncSequence>: AsyncSequence where Base.Element: MultipartChunk {
    public typealias Element = Part

    let base: Base
    let parser: MultipartParser
    let encoding: ContentEncoding
    let readsEpilogue: Bool

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(
            driver: PartsDriver(
                iterator: base.makeAsyncIterator(),
                parser: DecompressingMultipartParser(parser: parser, encoding: encoding), readsEpilogue: readsEpilogue))
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let driver: PartsDriver<Base>

        /// The next part, on the caller's actor (SE-0421): no hop to the global executor and back for each part.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> Part? {
            guard let head = try await driver.nextPart(isolation: actor) else { return nil }
            return Part(head: head, body: PartBody(driver: driver, index: head.index))
        }

        public mutating func next() async throws -> Part? {
            try await next(isolation: nil)
        }
    }
}

extension MultipartParts {
    /// One part of a streamed body: its head now, its body as it arrives.
    public struct Part {
        /// The part's index, headers and `Content-Disposition`.
        public let head: MultipartParser.PartHead
        /// The part's body bytes. Read them before asking for the next part, or they are skipped.
        public let body: PartBody
    }

    /// A part's body as an async sequence of byte chunks (slices of the source's chunks wherever possible).
    public struct PartBody: AsyncSequence {
        public typealias Element = ArraySlice<UInt8>

        let driver: PartsDriver<Base>
        let index: Int

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(driver: driver, index: index) }

        public struct AsyncIterator: AsyncIteratorProtocol {
            let driver: PartsDriver<Base>
            let index: Int

            /// The next bytes, on the caller's actor (SE-0421).
            public mutating func next(isolation actor: isolated (any Actor)?) async throws -> ArraySlice<UInt8>? {
                try await driver.nextBodyBytes(ofPart: index, isolation: actor)
            }

            public mutating func next() async throws -> ArraySlice<UInt8>? {
                try await next(isolation: nil)
            }
        }

        /// The whole body, for fields and small files.
        ///
        /// - Throws: ``MultipartError/Code/limitExceeded`` when the body is longer than `maxBytes`.
        public func collect(
            upTo maxBytes: Int, isolation actor: isolated (any Actor)? = #isolation
        ) async throws -> [UInt8] {
            var bytes: [UInt8] = []
            var iterator = makeAsyncIterator()
            while let chunk = try await iterator.next(isolation: actor) {
                guard bytes.count + chunk.count <= maxBytes else {
                    throw MultipartError(
                        code: .limitExceeded,
                        message: "part \(index) is longer than the \(maxBytes) bytes collect(upTo:) allows",
                        partIndex: index)
                }
                bytes += chunk
            }
            return bytes
        }
    }
}

/// The name in the untagged previews; deprecated in 0.1, removed in 0.2.
@available(*, deprecated, renamed: "MultipartParts.Part")
public typealias MultipartStreamedPart<Base: AsyncSequence> = MultipartParts<Base>.Part
where Base.Element: MultipartChunk

/// The name in the untagged previews; deprecated in 0.1, removed in 0.2.
@available(*, deprecated, renamed: "MultipartParts.PartBody")
public typealias MultipartPartBody<Base: AsyncSequence> = MultipartParts<Base>.PartBody
where Base.Element: MultipartChunk

/// The parser and the source iterator that a parts sequence and its bodies share.
///
/// A class because the parts iterator and each part's body iterator pull from the same source; they are used from
/// one task, in order, like any async iterator.
final class PartsDriver<Base: AsyncSequence> where Base.Element: MultipartChunk {
    private var iterator: Base.AsyncIterator
    private var parser: DecompressingMultipartParser
    /// The part whose body is being read, until its `.partEnd`.
    private var openPart: Int?
    private var sourceEnded = false
    /// Whether `.end` came: no part follows.
    private var ended = false
    private let readsEpilogue: Bool

    init(iterator: Base.AsyncIterator, parser: consuming DecompressingMultipartParser, readsEpilogue: Bool) {
        self.iterator = iterator
        self.parser = parser
        self.readsEpilogue = readsEpilogue
    }

    /// The next parser event, pulling chunks from the source as needed; nil after the end of the source.
    private func nextEvent(isolation actor: isolated (any Actor)?) async throws -> MultipartParser.Event? {
        while true {
            try Task.checkCancellation()
            if let event = try parser.next() { return event }
            if sourceEnded { return nil }
            if let chunk = try await pull(isolation: actor) {
                try parser.append(chunk.multipartBytes)
            } else {
                // Sources such as AsyncStream end early when their task is cancelled: that is a cancellation, not
                // a truncated body.
                try Task.checkCancellation()
                sourceEnded = true
                try parser.finish()
            }
        }
    }

    /// The source's next chunk, pulled on `actor` where the platform has SE-0421's `next(isolation:)`.
    private func pull(isolation actor: isolated (any Actor)?) async throws -> Base.Element? {
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) {
            return try await iterator.next(isolation: actor)
        } else {
            // What the standard library's own default `next(isolation:)` does: the iterator is used by one task at a
            // time (this one), so handing it to the nonisolated `next()` shares it with nothing.
            nonisolated(unsafe) var unsafeIterator = iterator
            defer { iterator = unsafeIterator }
            return try await unsafeIterator.next()
        }
    }

    /// Skips what is left of the open part, then returns the next part's head, or nil after the last part.
    func nextPart(isolation actor: isolated (any Actor)?) async throws -> MultipartParser.PartHead? {
        guard !ended else { return nil }
        while let event = try await nextEvent(isolation: actor) {
            switch event {
            case .partHeaders(let head):
                openPart = head.index
                return head
            case .bodyBytes: continue
            case .partEnd: openPart = nil
            case .end:
                ended = true
                if readsEpilogue {
                    // To the source's end; finish() checks the close delimiter's line.
                    while try await nextEvent(isolation: actor) != nil {}
                }
                return nil
            }
        }
        return nil
    }

    /// The next bytes of part `index`, or nil once it has ended or was skipped.
    func nextBodyBytes(ofPart index: Int, isolation actor: isolated (any Actor)?) async throws -> ArraySlice<UInt8>? {
        guard openPart == index else { return nil }
        while let event = try await nextEvent(isolation: actor) {
            switch event {
            case .bodyBytes(let bytes): return bytes
            case .partEnd:
                openPart = nil
                return nil
            case .partHeaders, .end:
                preconditionFailure("the parser emitted \(event) inside part \(index)")
            }
        }
        return nil
    }
}
