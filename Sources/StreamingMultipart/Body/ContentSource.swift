import Foundation

/// An opened part content, as ``BodyReader`` reads it.
enum ContentSource {
    /// In-memory bytes, sent from `sent`.
    case memory(Data, sent: Int)
    /// An open file.
    case file(FileSource)
    /// An open input stream.
    case stream(StreamSource)

    /// Opens `content`: files are opened and checked against the length they had when appended; streams are made
    /// and opened.
    init(opening content: MultipartPart.Content) throws {
        switch content.storage {
        case .bytes(let data): self = .memory(data, sent: 0)
        case .file(let path, let length, let identity):
            self = .file(try FileSource(path: path, length: length, identity: identity))
        case .stream(let length, let make): self = .stream(try StreamSource(make: make, length: length))
        }
    }

    /// Appends up to `output.freeCapacity` bytes to `output` and returns how many; 0 at the end, after checking
    /// that the length was as declared.
    mutating func read(into output: inout OutputRawSpan) throws -> Int {
        switch self {
        case .memory(let data, let sent):
            let count = min(data.count - sent, output.freeCapacity)
            data.withSpan { output.append(copying: $0.extracting(sent..<(sent + count))) }
            self = .memory(data, sent: sent + count)
            return count
        case .file(var source):
            defer { self = .file(source) }
            return try source.read(into: &output)
        case .stream(var source):
            defer { self = .stream(source) }
            return try source.read(into: &output)
        }
    }

    /// Moves `count` bytes into the content without producing them, as though they had been read: a seek in a file,
    /// a read that drops them from a stream. `count` is within the content's length.
    mutating func skip(_ count: Int64) throws {
        guard count > 0 else { return }
        switch self {
        case .memory(let data, let sent): self = .memory(data, sent: sent + Int(count))
        case .file(var source):
            defer { self = .file(source) }
            try source.skip(count)
        case .stream(var source):
            defer { self = .stream(source) }
            try source.skip(count)
        }
    }

    /// Whether the bytes are in memory (no file or stream to read or close).
    var isMemory: Bool {
        if case .memory = self { true } else { false }
    }

    func close() {
        switch self {
        case .memory: break
        case .file(let source): source.file.close()
        case .stream(let source): source.stream.close()
        }
    }
}

/// A file part being read: exactly `length` bytes, or an error.
struct FileSource {
    let path: String
    let length: Int64
    let file: OpenFile
    private var remaining: Int64

    /// Opens the file at `path`, which must still be the regular file of `identity` that was appended.
    init(path: String, length: Int64, identity: FileStatus.Identity) throws {
        let status: FileStatus
        do {
            (file, status) = try OpenFile.openForReading(path: path)
        } catch let error as SystemCallError {
            throw MultipartError(
                code: error.meansNotFound ? .fileNotFound : .fileUnreadable,
                message: error.meansNotFound
                    ? "file \(path) was removed after it was appended" : "cannot open \(path) for reading",
                cause: error)
        }
        guard status.kind == .regular else {
            throw MultipartError(
                code: .notARegularFile,
                message: "\(path) is no longer a regular file (it was replaced after it was appended)")
        }
        guard status.identity == identity else {
            throw MultipartError(
                code: .fileReplaced,
                message: "\(path) names another file than when it was appended (moved over, or a link swapped in)")
        }
        self.path = path
        self.length = length
        remaining = length
        try checkSize()
        file.adviseSequential()
    }

    mutating func read(into output: inout OutputRawSpan) throws -> Int {
        guard remaining > 0 else {
            try checkSize()
            return 0
        }
        let wanted = Int(min(Int64(output.freeCapacity), remaining))
        let count: Int
        do {
            count = try file.read(into: &output, atMost: wanted)
        } catch {
            throw MultipartError(code: .fileUnreadable, message: "reading \(path) failed", cause: error)
        }
        guard count > 0 else {
            throw MultipartError(
                code: .lengthMismatch,
                message: "file \(path) ended after \(length - remaining) of the \(length) bytes it had when appended")
        }
        remaining -= Int64(count)
        return count
    }

    /// Moves the file's position `count` bytes on (a seek: nothing is read).
    mutating func skip(_ count: Int64) throws {
        do {
            try file.seek(by: count)
        } catch {
            throw MultipartError(code: .fileUnreadable, message: "seeking in \(path) failed", cause: error)
        }
        remaining -= count
    }

    /// Copies what is left of the file into `destination` inside the kernel (``OpenFile/copyInKernel(to:atMost:)``)
    /// and returns how many bytes, or nil when the kernel copied none (it refused, or the file ended early: a read
    /// then says which, and fails the part with ``MultipartError/Code/lengthMismatch`` if it ended).
    mutating func copyRest(to destination: OpenFile) throws -> Int64? {
        var copied: Int64 = 0
        while remaining > 0 {
            let count: Int?
            do {
                count = try file.copyInKernel(to: destination, atMost: Int(min(remaining, 1 << 30)))
            } catch {
                throw MultipartError(
                    code: .writeFailed,
                    message: "copying \(path) into the body's file failed after \(length - remaining) of its bytes",
                    cause: error)
            }
            guard let count, count > 0 else { break }
            remaining -= Int64(count)
            copied += Int64(count)
        }
        return copied > 0 ? copied : nil
    }

    private func checkSize() throws {
        let size: Int64
        do {
            size = try file.status().size
        } catch {
            throw MultipartError(code: .fileUnreadable, message: "cannot stat \(path)", cause: error)
        }
        guard size == length else {
            throw MultipartError(
                code: .lengthMismatch,
                message: "file \(path) is \(size) bytes now but was \(length) bytes when appended")
        }
    }
}

/// A stream part being read: exactly its declared length when it has one.
struct StreamSource {
    let stream: InputStream
    let length: Int64?
    private var produced: Int64 = 0

    init(make: () throws -> InputStream, length: Int64?) throws {
        do {
            stream = try make()
        } catch let error as MultipartError {
            throw error
        } catch {
            throw MultipartError(code: .streamFailed, message: "the part's stream could not be made", cause: error)
        }
        self.length = length
        stream.open()
        if stream.streamStatus == .error {
            throw MultipartError(
                code: .streamFailed, message: "the part's stream failed to open", cause: stream.streamError)
        }
    }

    mutating func read(into output: inout OutputRawSpan) throws -> Int {
        guard !output.isFull else { return 0 }
        if let length, produced == length {
            // Declared length reached: the stream must be at its end too.
            var probe: UInt8 = 0
            let extra = stream.read(&probe, maxLength: 1)
            try check(extra)
            guard extra == 0 else {
                throw MultipartError(
                    code: .lengthMismatch,
                    message: "the part's stream yielded more than the \(length) bytes it declared")
            }
            return 0
        }
        let wanted = length.map { Int(min(Int64(output.freeCapacity), $0 - produced)) } ?? output.freeCapacity
        let count = stream.read(into: &output, atMost: wanted)
        try check(count)
        if count == 0, let length {
            throw MultipartError(
                code: .lengthMismatch,
                message: "the part's stream ended after \(produced) of the \(length) bytes it declared")
        }
        produced += Int64(count)
        return count
    }

    /// Reads `count` bytes and drops them: a stream has no seek.
    mutating func skip(_ count: Int64) throws {
        var left = count
        var block = [UInt8]()
        while left > 0 {
            block.removeAll(keepingCapacity: true)
            let read = try block.append(capacity: Int(min(left, Int64(BodyReader.blockSize)))) {
                try self.read(into: &$0)
            }
            guard read > 0 else { return }  // the length was checked by read: not reached
            left -= Int64(read)
        }
    }

    private func check(_ count: Int) throws {
        guard count < 0 else { return }
        throw MultipartError(
            code: .streamFailed, message: "the part's stream failed after \(produced) bytes", cause: stream.streamError)
    }
}
