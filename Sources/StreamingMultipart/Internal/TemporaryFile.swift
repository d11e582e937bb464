#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A new file that either becomes its destination whole or disappears: the body `write(to:)` writes, and each file
/// a ``MultipartSpooler`` spools.
///
/// Beside a destination the name is the destination's, hidden, with 16 random bytes from the system's CSPRNG
/// (`.upload.body.3f9a…`); in a spool folder it is a fixed prefix and the random bytes (`upload-3f9a…`). Either is
/// created with `O_EXCL | O_NOFOLLOW`, so no other process can have made it or pointed it elsewhere. ``commit(to:)``
/// makes the bytes durable (`fsync`), renames the file over the destination, then makes the rename durable (`fsync`
/// of the folder); ``discard()`` removes it. One that is dropped without either is removed too, so no error path
/// leaves a temporary file behind.
///
/// ```swift
/// let temporary = try TemporaryFile(besides: "/uploads/upload.body")
/// try temporary.file.write(bytes)
/// try temporary.commit(to: "/uploads/upload.body")
/// ```
final class TemporaryFile {
    let file: OpenFile
    let path: String
    private var isFinished = false

    /// Creates the file in `destination`'s folder.
    ///
    /// - Parameter permissions: the mode it is created with, masked by the process's umask as `open(2)` does:
    ///   `0o600` (the default) for the owner alone, `0o666` for the usual mode of a new file.
    /// - Throws: ``SystemCallError`` from `open`.
    convenience init(besides destination: String, permissions: mode_t = 0o600) throws {
        let slash = destination.lastIndex(of: "/")
        let folder = slash.map { String(destination[...$0]) } ?? ""
        let name = slash.map { String(destination[destination.index(after: $0)...]) } ?? destination
        try self.init(path: "\(folder).\(name).\(Self.randomSuffix())", permissions: permissions)
    }

    /// Creates a file named `prefix` and 32 random hex digits in `directory`, mode 0600: a spooled upload, whose
    /// name owes nothing to what the client sent.
    ///
    /// - Throws: ``SystemCallError`` from `open`.
    convenience init(inDirectory directory: String, prefix: String) throws {
        let folder = directory.hasSuffix("/") ? directory : directory + "/"
        try self.init(path: "\(folder)\(prefix)\(Self.randomSuffix())", permissions: 0o600)
    }

    private init(path: String, permissions: mode_t) throws {
        self.path = path
        file = try OpenFile(path: path, flags: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: permissions)
    }

    /// 128 bits from the system's CSPRNG, as 32 hex digits.
    private static func randomSuffix() -> String {
        var random = SystemRandomNumberGenerator()
        return (0..<2).map { _ -> String in
            let hex = String(random.next(), radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    deinit { if !isFinished { discard() } }

    /// Flushes the file to disk, renames it over `destination`, and flushes the folder, so that after a crash the
    /// destination holds either its old content or the whole new one. A destination on another file system gets a
    /// copy, committed the same way, and this file is removed.
    ///
    /// - Throws: ``SystemCallError`` from `fsync`, `rename` or the copy; the file stays, to be committed again or
    ///   discarded.
    func commit(to destination: String) throws {
        if file.descriptor >= 0 {
            try file.synchronize()
            file.close()
        } else {
            try OpenFile(path: path).synchronize()  // closed after writing (a spooled file): flush it now
        }
        if rename(path, destination) != 0 {
            guard currentErrno() == EXDEV else { throw SystemCallError("rename") }
            try copy(to: destination)
            discard()
            return
        }
        isFinished = true
        let slash = destination.lastIndex(of: "/")
        let folder = slash.map { String(destination[...$0]) } ?? "."
        if let directory = try? OpenFile(path: folder, flags: O_RDONLY | O_DIRECTORY) {
            try? directory.synchronize()  // the rename is done; a folder that cannot be flushed does not undo it
        }
    }

    /// Copies the file to a temporary file beside `destination` on its file system, and commits that.
    private func copy(to destination: String) throws {
        let source = try OpenFile(path: path)
        let copy = try TemporaryFile(besides: destination)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while case let count = try source.read(into: buffer), count > 0 {
            try copy.file.write(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
        try copy.commit(to: destination)
    }

    /// Closes the descriptor and keeps the file, still to be committed or discarded (removed, at the latest, when
    /// this object goes away): a spooled upload holds no descriptor once its bytes are written.
    func closeFile() { file.close() }

    /// Closes and removes the file.
    func discard() {
        file.close()
        if !isFinished { unlink(path) }
        isFinished = true
    }
}
