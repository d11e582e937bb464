/// A file's bytes as an async sequence of chunks, read one chunk at a time as the consumer asks for it: memory stays
/// at one chunk whatever the file's size, and a consumer that stops early stops the reading (the file is closed when
/// the iterator goes away).
///
/// ```swift
/// for try await part in try FileChunks(path: "upload.body").multipartParts(contentType: contentType) {
///     print(part.head.name)  // asking for the next part skips the rest of this one's body
/// }
/// ```
///
/// Each `next()` is one `read(2)` on the calling task: meant for local files, whose reads come from the page cache
/// or a disk in microseconds. The file is opened at the first `next()`, without blocking on a FIFO, and must be a
/// regular file. The reads run on the caller's actor, the main actor too (SE-0421's `next(isolation:)`), with no hop
/// to the global executor and back for each chunk (`Benchmarks/RESULTS.md` measures what a hop cost).
public struct FileChunks: AsyncSequence, Sendable {
    public typealias Element = [UInt8]

    /// The file's path.
    public let path: String
    /// The most bytes in one chunk.
    public let chunkSize: Int

    /// The chunks of the file at `path`, at most `chunkSize` bytes each (64 KiB by default; at least 1).
    public init(path: String, chunkSize: Int = 64 * 1024) {
        self.path = path
        self.chunkSize = Swift.max(chunkSize, 1)
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(path: path, chunkSize: chunkSize) }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let path: String
        let chunkSize: Int
        private var file: OpenFile?
        private var isFinished = false

        init(path: String, chunkSize: Int) {
            self.path = path
            self.chunkSize = chunkSize
        }

        /// The next chunk, or nil at the end of the file.
        ///
        /// - Throws: ``MultipartError/Code/fileNotFound``, ``MultipartError/Code/fileUnreadable`` or
        ///   ``MultipartError/Code/notARegularFile`` at the first call; ``MultipartError/Code/fileUnreadable`` for a
        ///   failed read, with the ``SystemCallError`` as its cause.
        public mutating func next() async throws -> [UInt8]? { try nextChunk() }

        /// The next chunk, read on the caller's actor (SE-0421): no hop to the global executor and back per chunk.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> [UInt8]? { try nextChunk() }

        private mutating func nextChunk() throws -> [UInt8]? {
            guard !isFinished else { return nil }
            let file = try self.file ?? open()
            self.file = file
            let chunkSize = chunkSize
            let chunk = try [UInt8](capacity: chunkSize) { output in
                do {
                    _ = try output.withRawOutput { try file.read(into: &$0) }
                } catch {
                    throw MultipartError(code: .fileUnreadable, message: "reading \(path) failed", cause: error)
                }
            }
            guard !chunk.isEmpty else {
                file.close()
                isFinished = true
                return nil
            }
            return chunk
        }

        private func open() throws -> OpenFile {
            let (file, status): (OpenFile, FileStatus)
            do {
                (file, status) = try OpenFile.openForReading(path: path)
            } catch let error as SystemCallError {
                let missing = error.meansNotFound
                throw MultipartError(
                    code: missing ? .fileNotFound : .fileUnreadable,
                    message: missing ? "file not found: \(path)" : "cannot open \(path) for reading", cause: error)
            }
            guard status.kind == .regular else {
                throw MultipartError(code: .notARegularFile, message: "\(path) is not a regular file")
            }
            file.adviseSequential()
            return file
        }
    }
}
