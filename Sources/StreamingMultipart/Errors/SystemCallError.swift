import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call and its `errno`: the ``MultipartError/cause`` of file errors, so a caller can tell a full
/// disk (`ENOSPC`) from a missing permission (`EACCES`).
///
/// ```swift
/// catch let error as MultipartError where (error.cause as? SystemCallError)?.errno == ENOSPC { … }
/// ```
public struct SystemCallError: Error, CustomStringConvertible, Sendable {
    /// The call that failed: `open`, `read`, `write`, `fsync`, `rename`, …
    public var call: String
    /// Its `errno`.
    public var errno: Int32

    init(_ call: String, errno: Int32 = currentErrno()) {
        self.call = call
        self.errno = errno
    }

    /// The path, or a folder on it, does not exist.
    var meansNotFound: Bool { errno == ENOENT || errno == ENOTDIR }

    public var description: String { "\(call): \(String(cString: strerror(errno))) (errno \(errno))" }
}

/// The calling thread's `errno`, under a name that a type with an `errno` property of its own can still reach.
func currentErrno() -> Int32 { errno }
