public import Foundation
import Metrics

/// A chunk of body bytes the async layer can parse: `[UInt8]` and `ArraySlice<UInt8>` without a copy, `Data`
/// with one, a `ByteBuffer` (`StreamingMultipartNIO`) without one, its parts' bodies handed out as views of it.
public protocol MultipartChunk {
    /// What a part's body comes out as, cut from chunks of this type (``MultipartParts/PartBody``'s element):
    /// `ArraySlice<UInt8>` unless the chunk lends its storage, as a `ByteBuffer` does (``LentBytes``).
    /// A chunk itself, so that a part's body parses in turn (a `multipart/mixed` part's files).
    associatedtype MultipartSlice: RandomAccessCollection & Sendable & MultipartChunk = ArraySlice<UInt8>
    where MultipartSlice.Element == UInt8

    /// The chunk's bytes, as the parser reads them: a slice of an array, or lent storage.
    var multipartBytes: MultipartBytes { get }

    /// `bytes` as a part's body: a region of chunks of this type, or bytes the parser copied (when a body's bytes
    /// were joined across two chunks).
    static func multipartSlice(_ bytes: consuming MultipartBytes) -> MultipartSlice
}

extension MultipartChunk where MultipartSlice == ArraySlice<UInt8> {
    /// `bytes` as an array slice: the slice itself for bytes in an array, else a copy.
    @inlinable
    public static func multipartSlice(_ bytes: consuming MultipartBytes) -> ArraySlice<UInt8> { bytes.arraySlice }
}

extension Array: MultipartChunk where Element == UInt8 {
    public var multipartBytes: MultipartBytes { MultipartBytes(self[...]) }
}

extension ArraySlice: MultipartChunk where Element == UInt8 {
    public var multipartBytes: MultipartBytes { MultipartBytes(self) }
}

extension Data: MultipartChunk {
    public var multipartBytes: MultipartBytes { MultipartBytes([UInt8](self)[...]) }
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
    /// With a `timeout`, each chunk is checked against it as it arrives: a body that trickles in below its
    /// minimum rate, or past its deadline, fails with ``MultipartError/Code/timedOut``. A source that never delivers
    /// its next chunk is not cut by the sequence (it cannot cancel the task that iterates it); ``MultipartSpooler``
    /// is, by a watchdog of its own, and so is any loop run under a server's idle timeout.
    ///
    /// - Throws: ``MultipartError/Code/invalidLimit`` for a limit below 1 or a timeout that is not above zero;
    ///   ``MultipartError/Code/unsupportedContentEncoding`` for another coding.
    public func multipartParts(
        boundary: MultipartBoundary, contentEncoding: String? = nil, limits: MultipartParser.Limits = .default,
        mode: MultipartParser.Mode = .strict, readsEpilogue: Bool = false, timeout: MultipartBodyTimeout? = nil
    ) throws -> MultipartParts<Self> {
        try timeout?.validate()
        return MultipartParts(
            base: self, parser: try MultipartParser(boundary: boundary, limits: limits, mode: mode),
            encoding: try ContentEncoding(headerValue: contentEncoding), readsEpilogue: readsEpilogue,
            timeout: timeout)
    }

    /// The parts of the body, with the boundary read from a `Content-Type` value.
    ///
    /// - Throws: what ``MultipartBoundary/init(contentType:)`` throws; ``MultipartError/Code/invalidLimit``;
    ///   ``MultipartError/Code/unsupportedContentEncoding``.
    public func multipartParts(
        contentType: String, contentEncoding: String? = nil, limits: MultipartParser.Limits = .default,
        mode: MultipartParser.Mode = .strict, readsEpilogue: Bool = false, timeout: MultipartBodyTimeout? = nil
    ) throws -> MultipartParts<Self> {
        try multipartParts(
            boundary: try MultipartBoundary(contentType: contentType), contentEncoding: contentEncoding,
            limits: limits, mode: mode, readsEpilogue: readsEpilogue, timeout: timeout)
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
    let timeout: MultipartBodyTimeout?
    /// The watchdog to count chunks in, when the caller watches the body too (the spooler); else each iteration
    /// makes its own from `timeout`.
    var watchdog: BodyWatchdog?
    /// The counter of bytes received each chunk adds to, when the caller reports them (the spooler's).
    var received: Counter?

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(
            driver: PartsDriver(
                iterator: base.makeAsyncIterator(),
                parser: DecompressingMultipartParser(parser: parser, encoding: encoding), readsEpilogue: readsEpilogue,
                watchdog: watchdog ?? timeout.map { BodyWatchdog($0) }, received: received))
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        @usableFromInline let driver: PartsDriver<Base>

        @usableFromInline init(driver: PartsDriver<Base>) { self.driver = driver }

        /// The next part, on the caller's actor (SE-0421): no hop to the global executor and back for each part.
        ///
        /// Inlinable so that the caller's loop runs the parser's events without an async call of its own: only a
        /// chunk pulled from the source is an `await` that can suspend.
        @inlinable
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> Part? {
            while true {
                switch try driver.nextPartNow() {
                case .part(let head): return Part(head: head, body: PartBody(driver: driver, index: head.index))
                case .end:
                    try await driver.finishParts(isolation: actor)
                    return nil
                case .none: return nil
                case .needsInput: try await driver.pull(isolation: actor)
                }
            }
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

        @usableFromInline init(head: MultipartParser.PartHead, body: PartBody) {
            self.head = head
            self.body = body
        }
    }

    /// A part's body as an async sequence of byte chunks: slices of the source's chunks wherever possible
    /// (`ArraySlice<UInt8>` for arrays, ``LentBytes`` for `ByteBuffer`s: see ``MultipartChunk/MultipartSlice``).
    public struct PartBody: AsyncSequence {
        public typealias Element = Base.Element.MultipartSlice

        @usableFromInline let driver: PartsDriver<Base>
        @usableFromInline let index: Int

        @usableFromInline init(driver: PartsDriver<Base>, index: Int) {
            self.driver = driver
            self.index = index
        }

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(driver: driver, index: index) }

        public struct AsyncIterator: AsyncIteratorProtocol {
            @usableFromInline let driver: PartsDriver<Base>
            @usableFromInline let index: Int

            /// The next bytes, on the caller's actor (SE-0421); inlinable as the parts iterator's `next` is.
            @inlinable
            public mutating func next(isolation actor: isolated (any Actor)?) async throws -> Element? {
                while true {
                    switch try driver.nextBodyBytesNow(ofPart: index) {
                    case .bytes(let bytes): return Base.Element.multipartSlice(bytes)
                    case .none: return nil
                    case .needsInput: try await driver.pull(isolation: actor)
                    }
                }
            }

            public mutating func next() async throws -> Element? {
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
                        message: "part \(index + 1) is longer than the \(maxBytes) bytes collect(upTo:) allows",
                        partIndex: index, limit: "collect(upTo:)")
                }
                bytes += chunk
            }
            return bytes
        }
    }
}
