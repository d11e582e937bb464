import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension MultipartSpooler {
    /// Removes the files a spooler left in its folder (``MultipartSpooler/Destination/folder(_:diskBudget:)``) when
    /// its process ended before it could (a crash, a `kill -9`, a power cut), and returns how many it removed.
    ///
    /// Only what a spooler creates is touched: regular files named `upload-` and 32 lower-case hex digits, owned by
    /// this process's user, last written more than `age` ago. Anything else in the folder (other names, symbolic
    /// links, folders, other users' files) is left alone. Run it when a server starts, before it accepts uploads;
    /// run while uploads are in flight, `age` must exceed how long any form is kept, since a form's files are
    /// not written to again after the body ends.
    ///
    /// ```swift
    /// let spooler = MultipartSpooler(directory: "/var/spool/uploads")
    /// let removed = try spooler.removeStaleFiles(olderThan: .seconds(3600))
    /// logger.info("removed \(removed) spooled files left by an earlier run")
    /// ```
    ///
    /// - Parameter age: how long ago a file must have last been written; zero or more.
    /// - Returns: the number of files removed.
    /// - Throws: ``MultipartError/Code/writeFailed`` with the ``SystemCallError`` as its cause when the folder
    ///   cannot be read or a file cannot be removed (files removed before that stay removed);
    ///   ``MultipartError/Code/invalidState`` for a spooler into a store, which has no folder (a store sweeps its
    ///   own: `S3Store.abortStaleUploads(olderThan:now:)`).
    @discardableResult
    public func removeStaleFiles(olderThan age: Duration) throws -> Int {
        guard case .folder(let directory, _) = destination else {
            throw MultipartError(
                code: .invalidState,
                message: "a spooler into a store has no spool folder to sweep: sweep the store itself")
        }
        let folder = directory.hasSuffix("/") ? directory : directory + "/"
        let names: [String]
        do {
            names = try FolderListing.names(in: directory)
        } catch {
            throw MultipartError(code: .writeFailed, message: "cannot list the spool folder \(directory)", cause: error)
        }
        let cutoff = Date().timeIntervalSince1970 - max(age, .zero).seconds
        var removed = 0
        for name in names where SpoolFileName.matches(name) {
            let path = folder + name
            guard let file = FolderListing.regularFile(at: path), file.owner == geteuid() else { continue }
            let modified = Double(file.modified.tv_sec) + Double(file.modified.tv_nsec) / 1e9
            guard modified < cutoff else { continue }
            if unlink(path) == 0 {
                removed += 1
                continue
            }
            let failure = SystemCallError("unlink")
            guard failure.errno != ENOENT else { continue }  // another sweep got there first: not an error
            throw MultipartError(
                code: .writeFailed, message: "cannot remove the stale spooled file \(path)", cause: failure)
        }
        return removed
    }
}
