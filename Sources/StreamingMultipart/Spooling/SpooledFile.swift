public import Foundation

/// A file part of a spooled form: its bytes on disk (or in memory, under ``MultipartSpooler/Limits/memoryThreshold``)
/// and what the client said of it.
///
/// A spooled file on disk belongs to its form until it is moved out with ``move(to:)-(String)``: it is removed by
/// ``SpooledForm/removeFiles()``, at the end of
/// ``MultipartSpooler/withSpooledForm(_:contentType:contentEncoding:isolation:_:)``, or, at the latest, when the last
/// copy of this value goes away.
///
/// ```swift
/// if let photo = form.file(named: "photo") {
///     print(photo.filename, photo.byteCount, photo.digest?.hex ?? "")
///     try photo.move(to: "/srv/photos/\(UUID()).jpg")     // kept: the form no longer removes it
/// }
/// ```
public struct SpooledFile: Sendable {
    /// The part's field name (`Content-Disposition`'s `name`).
    public let name: String
    /// The filename as the client sent it, by the library's one rule (``ContentDisposition/preferredFilename``:
    /// the decoded `filename*` when sent, else `filename`), unchanged: it may hold folders, `..`, quotes or control
    /// characters. Never use it as a path; see ``safeFilename``.
    public let filename: String
    /// ``filename`` made safe to use as the last component of a path; see ``ContentDisposition/safeBaseName(_:)``.
    public let safeFilename: String
    /// The part's `Content-Type` value as sent, or nil when it sent none.
    public let contentType: String?
    /// The part's body bytes.
    public let byteCount: Int64
    /// The hash of the bytes, computed as they arrived, when the spooler has a ``SpoolDigest``.
    public let digest: Digest?
    /// The part's index in the body, from 0.
    public let partIndex: Int

    let storage: Storage

    enum Storage: Sendable {
        case memory([UInt8])
        /// A file on this machine's disk that the form owns: the spool folder's, or another store's local file.
        case disk(any MultipartLocalFile)
        /// In the spooler's ``MultipartFileStore``.
        case stored(MultipartStoredObject)
    }

    /// A hash of a file's bytes.
    public struct Digest: Sendable, Hashable {
        /// The algorithm, as ``SpoolDigest/algorithm`` names it: `"sha-256"`.
        public let algorithm: String
        /// The hash.
        public let bytes: [UInt8]

        /// The hash in lowercase hex, as `sha256sum` prints it.
        public var hex: String { Hex.lowercase(bytes) }
    }

    /// Whether the bytes are in memory (a file no larger than ``MultipartSpooler/Limits/memoryThreshold``).
    public var isInMemory: Bool {
        if case .memory = storage { true } else { false }
    }

    /// Where the spool holds the file: a path in the spooler's folder, or nil when the bytes are in memory or the
    /// file was moved out or removed.
    public var path: String? {
        if case .disk(let owner) = storage { owner.path } else { nil }
    }

    /// Where the spooler's ``MultipartFileStore`` holds the file, or nil when it is on disk or in memory.
    public var storedObject: MultipartStoredObject? {
        if case .stored(let object) = storage { object } else { nil }
    }

    /// The file's bytes, read whole: for small files and tests. Stream a large one with `FileChunks(path:)`.
    ///
    /// - Throws: ``MultipartError/Code/fileNotFound`` once the file was moved or removed;
    ///   ``MultipartError/Code/fileUnreadable`` when reading fails.
    public func contents() throws -> [UInt8] {
        switch storage {
        case .memory(let bytes): return bytes
        case .disk(let owner):
            guard let path = owner.path else {
                throw MultipartError(
                    code: .fileNotFound, message: "spooled file \(partIndex) (\"\(name)\") was moved or removed",
                    partIndex: partIndex)
            }
            do {
                return try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            } catch {
                throw MultipartError(code: .fileUnreadable, message: "cannot read \(path)", cause: error)
            }
        case .stored(let object): throw Self.inStore(object, partIndex: partIndex)
        }
    }

    /// Moves the file out of the spool to `destination`, where the form no longer removes it: a rename (atomic,
    /// after an `fsync`), or a copy when `destination` is on another file system. An existing file at
    /// `destination` is replaced, as `rename(2)` does. A file in memory is written there the same way.
    ///
    /// - Throws: ``MultipartError/Code/writeFailed`` with the ``SystemCallError`` as its cause (the spooled file
    ///   stays then, to be moved again); ``MultipartError/Code/fileNotFound`` when it was moved or removed already.
    public func move(to destination: String) throws {
        switch storage {
        case .disk(let owner):
            do {
                try owner.move(to: destination)
            } catch var error as MultipartError {
                error.partIndex = partIndex
                throw error
            } catch {
                throw MultipartError(
                    code: .writeFailed, message: "cannot move spooled file \(partIndex) to \(destination)",
                    partIndex: partIndex, cause: error)
            }
        case .stored(let object):
            throw Self.inStore(object, partIndex: partIndex)
        case .memory(let bytes):
            do {
                let temporary = try TemporaryFile(besides: destination)
                try bytes.withSpan { try temporary.file.write($0) }
                try temporary.commit(to: destination)
            } catch {
                throw MultipartError(
                    code: .writeFailed, message: "cannot write spooled file \(partIndex) to \(destination)",
                    partIndex: partIndex, cause: error)
            }
        }
    }

    /// Moves the file out of the spool to `destination`; see ``move(to:)-(String)``.
    public func move(to destination: URL) throws { try move(to: destination.path) }

    /// Removes the file from disk now (a file in memory has nothing to remove, nor has one in a store, which
    /// belongs to the caller).
    public func remove() {
        if case .disk(let owner) = storage { owner.remove() }
    }

    private static func inStore(_ object: MultipartStoredObject, partIndex: Int) -> MultipartError {
        MultipartError(
            code: .fileUnreadable,
            message: "spooled file \(partIndex) is in the spooler's store at \(object.location): read it from there",
            partIndex: partIndex)
    }
}

/// The one owner of a spooled file on disk: removes it when asked, or when the last ``SpooledFile`` holding it goes
/// away, unless it was moved out.
///
/// A class under a lock because copies of a form may be used from several tasks (it is `Sendable`); unchecked
/// because a `TemporaryFile` is not, and is only touched under that lock.
final class SpoolFileOwner: MultipartLocalFile, @unchecked Sendable {
    /// The file, until it is moved out or removed.
    private let temporary: LockedValue<TemporaryFile?>
    /// The spooler's shared budget and the file's bytes in it, given back when the file leaves the spool.
    private let budget: MultipartSpooler.DiskBudget?
    private let budgeted: Int64

    init(_ temporary: TemporaryFile, budget: MultipartSpooler.DiskBudget? = nil, budgeted: Int64 = 0) {
        temporary.closeFile()
        self.temporary = LockedValue(temporary)
        self.budget = budget
        self.budgeted = budgeted
    }

    var path: String? { temporary.withLock { $0?.path } }

    func move(to destination: String) throws {
        try self.temporary.withLock { held in
            guard let temporary = held else {
                throw MultipartError(code: .fileNotFound, message: "the spooled file was moved or removed already")
            }
            do {
                try temporary.commit(to: destination)
            } catch {
                throw MultipartError(
                    code: .writeFailed, message: "cannot move the spooled file \(temporary.path) to \(destination)",
                    cause: error)
            }
            held = nil
        }
        budget?.release(budgeted)  // out of the spool: no longer the spooler's to hold
    }

    func remove() {
        let removed = temporary.withLock { held in
            defer { held = nil }
            return held
        }
        guard let removed else { return }
        removed.discard()
        budget?.release(budgeted)
    }

    deinit {
        if let temporary = temporary.withLock({ $0 }) {
            temporary.discard()
            budget?.release(budgeted)
        }
    }
}
