#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A new file beside its destination that either becomes the destination whole or disappears.
///
/// The name is the destination's, hidden, with 16 random bytes from the system's CSPRNG (`.upload.body.3f9a…`),
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
    init(besides destination: String, permissions: mode_t = 0o600) throws {
        let slash = destination.lastIndex(of: "/")
        let folder = slash.map { String(destination[...$0]) } ?? ""
        let name = slash.map { String(destination[destination.index(after: $0)...]) } ?? destination
        var random = SystemRandomNumberGenerator()
        let suffix = (0..<2).map { _ -> String in
            let hex = String(random.next(), radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
        path = "\(folder).\(name).\(suffix)"
        file = try OpenFile(path: path, flags: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: permissions)
    }

    deinit { if !isFinished { discard() } }

    /// Flushes the file to disk, renames it over `destination`, and flushes the folder, so that after a crash the
    /// destination holds either its old content or the whole new one.
    ///
    /// - Throws: ``SystemCallError`` from `fsync` or `rename`; the temporary file is removed then.
    func commit(to destination: String) throws {
        do {
            try file.synchronize()
            file.close()
            guard rename(path, destination) == 0 else { throw SystemCallError("rename") }
            isFinished = true
        } catch {
            discard()
            throw error
        }
        let slash = destination.lastIndex(of: "/")
        let folder = slash.map { String(destination[...$0]) } ?? "."
        if let directory = try? OpenFile(path: folder, flags: O_RDONLY | O_DIRECTORY) {
            try? directory.synchronize()  // the rename is done; a folder that cannot be flushed does not undo it
        }
    }

    /// Closes and removes the file.
    func discard() {
        file.close()
        unlink(path)
        isFinished = true
    }
}
