import Foundation

/// Produces a body's bytes in order into buffers the caller owns: the one engine behind every transport.
///
/// ```swift
/// var reader = body.makeReader()
/// while true {
///     let chunk = try [UInt8](capacity: 64 * 1024) { _ = try reader.read(into: &$0) }
///     if chunk.isEmpty { break }
///     send(chunk)
/// }
/// ```
///
/// Files are opened when their part is reached and read straight into the caller's buffer when it has 32 KiB of room
/// or more, otherwise in 64 KiB blocks through one reusable staging buffer. A part that yields fewer or more bytes than
/// it declared, or a file whose size changed since it was appended, fails the read with
/// ``MultipartError/Code/lengthMismatch``: the bytes produced never disagree with ``MultipartBody/contentLength``.
/// After a failure every read throws the same error.
///
/// A reader holds open files and streams; ``close()`` releases them early, and dropping the reader releases them too.
/// It cannot be copied (`~Copyable`): a copy would share those descriptors and each would move the other's position.
/// Make a second reader with ``MultipartBody/makeReader(compression:)`` instead, which starts from the body's first
/// byte, or ``MultipartBody/makeReader(startingAt:)``, which starts at any byte.
public struct BodyReader: ~Copyable {
    /// The block in which files and streams are read when the caller's buffer is small (tuning, not API).
    static let blockSize = 64 * 1024
    /// The room in the caller's buffer from which a file or stream is read straight into it (tuning, not API).
    static let directReadMinimum = 32 * 1024

    /// The exact length of what this reader produces, or nil when some part's length is unknown or the body is
    /// compressed.
    public let contentLength: Int64?
    /// The bytes produced so far (compressed bytes, when compressing).
    public private(set) var bytesRead: Int64 = 0
    /// The body's own (uncompressed) length and the bytes of it read so far: what progress reports.
    let plainLength: Int64?
    private(set) var plainBytesRead: Int64 = 0
    /// Whether the body is compressed as it is read, and zlib's stage once the first read has started it.
    private var compressing: Compressing

    private let boundary: MultipartBoundary
    /// Whether file and stream parts are scanned for the boundary as they are read: when the caller chose it.
    private let watchesContent: Bool
    private let parts: [MultipartPart]
    private var state: State
    private var staging = Staging()

    /// The compression of what the reader produces.
    enum Compressing {
        /// The body's own bytes.
        case off
        /// Compressed, once the first read starts zlib. Next: `.running`, or the reader `.failed` when zlib cannot
        /// start.
        case starting(MultipartBody.Compression)
        /// Compressed through this stage. A compression error fails the reader.
        case running(CompressionStage)
    }

    /// The reader's states. Each case says what it sends and where it goes next.
    enum State {
        /// Sending part `index`'s delimiter line and header block, `bytes`, from `sent`.
        /// Next: `.content(index, …)` once all are sent (opening the part's file or stream).
        case head(index: Int, bytes: [UInt8], sent: Int)
        /// Sending part `index`'s content, a file or stream watched for the boundary when the caller chose it.
        /// Next: `.head(index + 1, …)`, or `.close` after the last part.
        case content(index: Int, ContentSource, BoundaryWatch?)
        /// Sending the close delimiter, `bytes`, from `sent`. Next: `.finished`.
        case close(bytes: [UInt8], sent: Int)
        /// Everything was sent; reads return 0.
        case finished
        /// A read failed or the reader was closed early; every later read throws this error.
        case failed(MultipartError)
    }

    init(body: MultipartBody, compression: MultipartBody.Compression? = nil) {
        boundary = body.boundary
        watchesContent = !body.boundaryIsRandom
        parts = body.parts
        plainLength = body.contentLength
        contentLength = compression == nil ? body.contentLength : nil
        compressing = compression.map { .starting($0) } ?? .off
        if let first = parts.first {
            state = .head(index: 0, bytes: BodyLayout.head(of: first, at: 0, boundary: boundary), sent: 0)
        } else {
            state = .close(bytes: BodyLayout.closeDelimiter(boundary, afterParts: false), sent: 0)
        }
    }

    /// A reader of `body` from byte `offset` on (``MultipartBody/makeReader(startingAt:)``), uncompressed.
    init(body: MultipartBody, startingAt offset: Int64) throws(MultipartError) {
        boundary = body.boundary
        watchesContent = !body.boundaryIsRandom
        parts = body.parts
        plainLength = body.contentLength
        compressing = .off
        state = try Self.state(of: body, at: offset, watchesContent: !body.boundaryIsRandom)
        contentLength = body.contentLength.map { $0 - offset }  // 0 ≤ offset ≤ the length: state(of:at:) checked
        plainBytesRead = offset
    }

    /// The index of the part being sent, or nil before the first and after the last.
    public var currentPartIndex: Int? {
        switch state {
        case .head(let index, _, _), .content(let index, _, _): index
        case .close, .finished, .failed: nil
        }
    }

    /// Whether the whole body has been produced.
    public var isFinished: Bool {
        guard case .finished = state else { return false }
        switch compressing {
        case .off: return true
        case .starting: return false
        case .running(let stage): return stage.isFinished
        }
    }

    /// Fills `buffer` with the body's next bytes and returns how many; 0 means the body is complete.
    ///
    /// A read fills the whole buffer unless the body ends first. The raw-buffer form of ``read(into:)-(OutputRawSpan)``,
    /// for callers that hold a raw buffer already, as `InputStream.read(_:maxLength:)` does.
    ///
    /// - Throws: ``MultipartError`` with the part index and body offset: a file that vanished, changed size or
    ///   failed to read; a stream that failed or yielded the wrong number of bytes; a reader already closed;
    ///   ``MultipartError/Code/compressionFailed`` when zlib cannot start.
    public mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try OutputRawSpan.filling(buffer) { _ = try read(into: &$0) }
    }

    /// Appends the body's next bytes to `output` until it is full or the body ends; returns how many, 0 when the
    /// body is complete.
    ///
    /// ```swift
    /// var chunk = ByteBuffer()
    /// try chunk.writeWithOutputRawSpan(minimumWritableBytes: 64 * 1024) { _ = try reader.read(into: &$0) }
    /// ```
    ///
    /// - Throws: what the raw-buffer `read(into:)` throws.
    @discardableResult
    public mutating func read(into output: inout OutputRawSpan) throws -> Int {
        let start = output.byteCount
        switch compressing {
        case .off: _ = try readPlain(into: &output)
        case .starting(let compression):
            if case .failed(let error) = state { throw error }
            let stage: CompressionStage
            do {
                stage = try CompressionStage(compression)
            } catch {
                throw fail(error, at: 0)
            }
            compressing = .running(stage)
            try readCompressed(into: &output, through: stage)
        case .running(let stage): try readCompressed(into: &output, through: stage)
        }
        let filled = output.byteCount - start
        bytesRead += Int64(filled)
        return filled
    }

    /// ``read(into:)-(OutputRawSpan)`` that appends at most `limit` bytes, for a sequence whose chunks have a size
    /// and whose buffers may have more room (NIO's allocator rounds capacities up).
    package mutating func read(into output: inout OutputRawSpan, atMost limit: Int) throws -> Int {
        guard limit < output.freeCapacity else { return try read(into: &output) }
        return try output.withPrefix(limit) { try read(into: &$0) }
    }

    /// Appends the body's next bytes to `output` until it is full or the body ends; returns how many, 0 when the
    /// body is complete.
    ///
    /// ```swift
    /// let chunk = try [UInt8](capacity: 64 * 1024) { _ = try reader.read(into: &$0) }
    /// ```
    ///
    /// - Throws: what the raw-buffer `read(into:)` throws.
    @discardableResult
    public mutating func read(into output: inout OutputSpan<UInt8>) throws -> Int {
        try output.withRawOutput { try read(into: &$0) }
    }

    /// When the reader is inside a file part that it neither compresses nor watches for the boundary, with nothing
    /// staged, copies the rest of that file into `destination` inside the kernel and counts it as read, so that
    /// `write(to:)` moves a large file into a body file without copying it through this process.
    ///
    /// - Returns: `.copied(n)`; `.notHere` when the reader is elsewhere (the caller reads); `.refused` when the
    ///   kernel will not copy into `destination` (the caller reads, and need not ask again for this destination).
    mutating func copyFileContent(to destination: OpenFile) throws -> KernelCopyResult {
        guard case .off = compressing, staging.isEmpty, case .content(let index, .file(var source), nil) = state
        else { return .notHere }
        let copied: Int64?
        do {
            copied = try source.copyRest(to: destination)
        } catch {
            throw fail(error, at: plainBytesRead)
        }
        state = .content(index: index, .file(source), nil)
        guard let copied else { return .refused }
        plainBytesRead += copied
        bytesRead += copied
        return .copied(copied)
    }

    /// What ``copyFileContent(to:)`` did.
    enum KernelCopyResult: Equatable {
        case copied(Int64)
        case notHere
        case refused
    }

    /// Appends compressed bytes to `output`: the body is read in blocks into the stage, and zlib writes straight
    /// into `output`. A zlib error fails the reader and closes its file or stream, as a read error does.
    private mutating func readCompressed(into output: inout OutputRawSpan, through stage: CompressionStage) throws {
        if case .failed(let error) = state { throw error }
        while !output.isFull, !stage.isFinished {
            if stage.isDrained && !stage.inputEnded {
                try stage.refill { try readPlain(into: &$0) }
            }
            do {
                try stage.compress(into: &output)
            } catch {
                throw fail(error, at: plainBytesRead)
            }
        }
    }

    /// Ends the reader on `error`: its file or stream is closed, and every later read throws the returned error.
    private mutating func fail(_ error: any Error, at offset: Int64) -> MultipartError {
        let failure = MultipartError(locating: error, partIndex: currentPartIndex, offset: offset)
        release()
        state = .failed(failure)
        return failure
    }

    /// Appends the body's own bytes to `output` until it is full; returns how many, 0 only at the end.
    private mutating func readPlain(into output: inout OutputRawSpan) throws -> Int {
        let start = output.byteCount
        while !output.isFull {
            let count: Int
            do {
                count = try step(into: &output)
            } catch {
                throw fail(error, at: plainBytesRead + Int64(output.byteCount - start))
            }
            if count == 0, case .finished = state { break }
        }
        let filled = output.byteCount - start
        plainBytesRead += Int64(filled)
        return filled
    }

    /// Closes the file or stream being read. A later read throws ``MultipartError/Code/cancelled``; a finished
    /// reader stays finished.
    public mutating func close() {
        switch state {
        case .finished, .failed: return
        case .head, .content, .close:
            release()
            state = .failed(
                MultipartError(
                    code: .cancelled, message: "the body reader was closed before the end of the body",
                    offset: plainBytesRead, partIndex: currentPartIndex))
        }
    }

    private func release() {
        if case .content(_, let source, _) = state { source.close() }
    }

    /// Appends bytes from the current state to `output` and moves to the next state when it is done.
    /// Returns 0 only on a transition or at the end.
    private mutating func step(into output: inout OutputRawSpan) throws -> Int {
        switch state {
        case .head(let index, let bytes, let sent):
            let count = Self.copy(bytes, from: sent, into: &output)
            if sent + count < bytes.count {
                state = .head(index: index, bytes: bytes, sent: sent + count)
            } else {
                let source = try ContentSource(opening: parts[index].content)
                state = .content(index: index, source, Self.watch(for: source, watchesContent, boundary))
            }
            return count

        case .content(let index, var source, nil) where source.isMemory:
            // Straight into the caller's buffer at any size: the bytes are already in memory.
            let count = try source.read(into: &output)
            if case .memory(let data, let sent) = source, sent < data.count {
                state = .content(index: index, source, nil)
            } else {
                advance(after: index)
            }
            return count

        case .content(let index, var source, var watch):
            if !staging.isEmpty { return staging.drain(into: &output) }
            let count: Int
            let (part, boundary) = (parts[index], boundary)
            let direct = output.freeCapacity >= Self.directReadMinimum
            if direct {
                let before = output.byteCount
                count = try source.read(into: &output)
                try Self.check(
                    output.bytes.extracting(before...), with: &watch, part: part, index: index, boundary: boundary)
            } else {
                count = try staging.refill { block in
                    let count = try source.read(into: &block)
                    try Self.check(block.bytes, with: &watch, part: part, index: index, boundary: boundary)
                    return count
                }
            }
            guard count > 0 else {
                source.close()
                advance(after: index)
                return 0
            }
            state = .content(index: index, source, watch)
            return direct ? count : staging.drain(into: &output)

        case .close(let bytes, let sent):
            let count = Self.copy(bytes, from: sent, into: &output)
            state = sent + count < bytes.count ? .close(bytes: bytes, sent: sent + count) : .finished
            return count

        case .finished:
            return 0

        case .failed(let error):
            throw error
        }
    }

    /// Fails the read when the next `bytes` of `part` (at `index`) hold the boundary (see ``BoundaryWatch``).
    static func check(
        _ bytes: RawSpan, with watch: inout BoundaryWatch?, part: MultipartPart, index: Int,
        boundary: MultipartBoundary
    ) throws {
        guard watch != nil, let offset = watch!.check(bytes) else { return }
        let name = part.headers[.contentDisposition].flatMap { try? ContentDisposition(parsing: $0) }?.name
        throw MultipartError(
            code: .boundaryInContent,
            message: "part \(index + 1)\(name.map { " (\"\($0)\")" } ?? "") holds the boundary "
                + "\(String(reflecting: boundary.value)) at byte \(offset) of its content: the receiver would read a "
                + "part of its own there (choose another boundary, or let the body draw a random one)",
            partIndex: index)
    }

    /// The watch for the boundary over a file or stream content, when the caller chose the boundary.
    static func watch(for source: ContentSource, _ watchesContent: Bool, _ boundary: MultipartBoundary)
        -> BoundaryWatch?
    {
        if case .memory = source { nil } else if watchesContent { BoundaryWatch(boundary: boundary) } else { nil }
    }

    private mutating func advance(after index: Int) {
        let next = index + 1
        if next < parts.count {
            state = .head(index: next, bytes: BodyLayout.head(of: parts[next], at: next, boundary: boundary), sent: 0)
        } else {
            state = .close(bytes: BodyLayout.closeDelimiter(boundary, afterParts: true), sent: 0)
        }
    }

    /// Appends `bytes[start...]` to `output`, as many as fit; returns how many.
    private static func copy(_ bytes: [UInt8], from start: Int, into output: inout OutputRawSpan) -> Int {
        let count = min(bytes.count - start, output.freeCapacity)
        let sending = bytes[start..<(start + count)]
        output.append(copying: sending.span)
        return count
    }
}

extension BodyReader {
    /// One reusable block for reads into small caller buffers: `bytes[start...]` are still to be drained.
    struct Staging {
        private var bytes: [UInt8] = []
        private var start = 0

        var isEmpty: Bool { start == bytes.count }

        /// Appends buffered bytes to `output`, as many as fit; returns how many.
        mutating func drain(into output: inout OutputRawSpan) -> Int {
            let count = BodyReader.copy(bytes, from: start, into: &output)
            start += count
            return count
        }

        /// Replaces the (drained) bytes with one block from `read`; returns its byte count.
        mutating func refill(_ read: (inout OutputRawSpan) throws -> Int) rethrows -> Int {
            bytes.removeAll(keepingCapacity: true)
            start = 0
            return try bytes.append(capacity: BodyReader.blockSize, read)
        }
    }
}
