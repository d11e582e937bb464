public import Foundation

extension MultipartPart {
    /// Where a part's bytes come from: memory, a file (opened only when read), or an input stream.
    ///
    /// ```swift
    /// let headers: MultipartHeaders = ["Content-Disposition": #"form-data; name="report""#,
    ///                                  "Content-Type": "text/csv"]
    /// try body.append(MultipartPart(headers: headers, content: .file(at: reportURL)))
    /// ```
    public struct Content: Sendable {
        enum Storage: Sendable {
            case bytes(Data)
            /// A regular file, its length and identity taken when it was appended.
            case file(path: String, length: Int64, identity: FileStatus.Identity)
            case stream(length: Int64?, make: @Sendable () throws -> InputStream)
        }

        let storage: Storage
        /// False for a ready-made stream, which can be read once; see ``isReproducible``.
        var canBeReadAgain = true

        /// Whether every read of the body produces this content again from the start: true for bytes, files and
        /// streams made by a closure, false for a ready-made `InputStream`. A transport may retry a request or
        /// follow a 307 redirect only with a body whose parts are all reproducible
        /// (``MultipartBody/isReproducible``).
        public var isReproducible: Bool { canBeReadAgain }

        /// The content's exact byte count, or nil for a stream of unknown length.
        public var length: Int64? {
            switch storage {
            case .bytes(let data): Int64(data.count)
            case .file(_, let length, _): length
            case .stream(let length, _): length
            }
        }

        /// In-memory bytes.
        public static func data(_ data: Data) -> Content { Content(storage: .bytes(data)) }

        /// A string as UTF-8.
        public static func text(_ text: String) -> Content { Content(storage: .bytes(Data(text.utf8))) }

        /// A regular file, whose length is taken now and which is opened only when the body is read.
        ///
        /// The file is opened now, without blocking, to check that it is a readable regular file; its device and
        /// inode are kept, and a read fails with ``MultipartError/Code/fileReplaced`` if the path names another
        /// file by then (a file moved over it, a symbolic link swapped in). A link appended as such is followed.
        ///
        /// - Throws: ``MultipartError/Code/fileNotFound`` for a missing path, ``MultipartError/Code/notARegularFile``
        ///   for a directory, FIFO or device, ``MultipartError/Code/fileUnreadable`` when it cannot be opened for
        ///   reading.
        public static func file(at url: URL) throws -> Content {
            let path = url.path
            let status: FileStatus
            do {
                (_, status) = try OpenFile.openForReading(path: path)  // closed as the handle goes
            } catch let error as SystemCallError {
                if error.errno == EISDIR {
                    throw MultipartError(code: .notARegularFile, message: "\(path) is a directory", cause: error)
                }
                let missing = error.meansNotFound
                throw MultipartError(
                    code: missing ? .fileNotFound : .fileUnreadable,
                    message: missing ? "file not found: \(path)" : "cannot open \(path) for reading", cause: error)
            }
            guard status.kind == .regular else {
                throw MultipartError(
                    code: .notARegularFile,
                    message: "\(path) is \(status.kind == .directory ? "a directory" : "not a regular file")")
            }
            return Content(storage: .file(path: path, length: status.size, identity: status.identity))
        }

        /// A stream made by `makeStream` each time the body is read.
        ///
        /// - Parameters:
        ///   - length: the exact byte count, or nil when unknown.
        ///   - makeStream: called for every read of the body; each call returns a new stream from the start.
        public static func stream(length: Int64?, _ makeStream: @escaping @Sendable () throws -> InputStream)
            -> Content
        {
            Content(storage: .stream(length: length, make: makeStream))
        }

        /// A ready-made stream: the body that holds it can be read once; a second read fails loudly with
        /// ``MultipartError/Code/streamAlreadyConsumed``.
        public static func stream(_ stream: sending InputStream, length: Int64?) -> Content {
            let box = OneShotStream(stream)
            return Content(storage: .stream(length: length, make: { try box.take() }), canBeReadAgain: false)
        }
    }
}

/// Hands out a ready-made `InputStream` once.
///
/// `@unchecked Sendable`: the stream is only touched under its lock, was handed over with `sending`, and is given
/// away at most once, after which this box holds nil.
final class OneShotStream: @unchecked Sendable {
    private let stream: LockedValue<InputStream?>

    init(_ stream: sending InputStream) { self.stream = LockedValue(stream) }

    func take() throws -> InputStream {
        let taken = stream.withLock { stream in
            defer { stream = nil }
            return stream
        }
        guard let taken else {
            throw MultipartError(
                code: .streamAlreadyConsumed,
                message: "this part's ready-made InputStream was already read; pass a closure that makes a new "
                    + "stream to send a body more than once")
        }
        return taken
    }
}
