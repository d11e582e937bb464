/// A finished file on this machine's disk that its form owns, as the spool folder's are: a store whose files are
/// local gives one from ``MultipartStoreWriter/localFile()``, and the form then reads it at ``path``
/// (``SpooledFile/path``, ``SpooledFile/contents()``), moves it out with ``move(to:)``
/// (``SpooledFile/move(to:)-(String)``), and removes it when the form ends (``SpooledForm/removeFiles()``, the end
/// of ``MultipartSpooler/withSpooledForm(_:contentType:contentEncoding:isolation:_:)``, a failed form).
///
/// ```swift
/// final class ScratchFile: MultipartLocalFile {
///     let held: Mutex<String?>   // Synchronization's
///     init(path: String) { held = Mutex(path) }
///     var path: String? { held.withLock { $0 } }
///     func move(to destination: String) throws {
///         try held.withLock { path in
///             guard let from = path else { throw MultipartError(code: .fileNotFound, message: "moved already") }
///             guard rename(from, destination) == 0 else { throw MultipartError(code: .writeFailed, message: from) }
///             path = nil
///         }
///     }
///     func remove() { if let path = held.withLock({ $0.take() }) { unlink(path) } }
///     deinit { remove() }   // the last form holding it went away
/// }
/// ```
///
/// A class: copies of a form share it, from several tasks. It removes the file when the last of them lets go of it
/// (its `deinit`), unless the file was moved out.
public protocol MultipartLocalFile: AnyObject, Sendable {
    /// Where the file is, or nil once it was moved out or removed.
    var path: String? { get }

    /// Moves the file to `destination`, where the form no longer removes it; an existing file there is replaced.
    ///
    /// - Throws: ``MultipartError/Code/fileNotFound`` once the file was moved or removed;
    ///   ``MultipartError/Code/writeFailed`` when it cannot be moved (it stays, to be moved again).
    func move(to destination: String) throws

    /// Removes the file now; nothing once it was moved or removed.
    func remove()
}
