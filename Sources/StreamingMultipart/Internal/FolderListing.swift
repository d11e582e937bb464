#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A folder's entries, as the sweep of stale spooled files reads them.
enum FolderListing {
    /// The names in the folder at `path` (`.` and `..` left out), in the order the file system gives them.
    ///
    /// - Throws: ``SystemCallError`` from `opendir`.
    static func names(in path: String) throws -> [String] {
        guard let directory = opendir(path) else { throw SystemCallError("opendir") }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// What `lstat(2)` says of a folder entry: a regular file's owner and last modification, or nil for anything
    /// else (a symbolic link, a folder) or an entry that is gone.
    static func regularFile(at path: String) -> (owner: uid_t, modified: timespec)? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        #if canImport(Darwin)
        return (info.st_uid, info.st_mtimespec)
        #else
        return (info.st_uid, info.st_mtim)
        #endif
    }
}
