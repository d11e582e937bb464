import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What `stat(2)` says of a path: only what the builder needs.
struct FileStatus {
    enum Kind { case regular, directory, other }

    /// Which file this is: its device and inode, the same for every path to it and different for any other file.
    struct Identity: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
    }

    var kind: Kind
    var size: Int64
    var identity: Identity

    /// - Throws: ``SystemCallError`` from `stat`.
    init(path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else { throw SystemCallError("stat") }
        self.init(info)
    }

    init(_ info: stat) {
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        default: kind = .other
        }
        size = Int64(info.st_size)
        identity = Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }
}

/// An open file descriptor, closed by ``close()`` or, at the latest, when the last reference goes away.
///
/// A class so that a reader that is dropped mid-body (a cancelled upload, an abandoned iterator) still closes
/// every file it opened.
final class OpenFile {
    private(set) var descriptor: Int32

    /// Opens `path` for reading, or creates it with `flags` and `mode`.
    init(path: String, flags: Int32 = O_RDONLY, mode: mode_t = 0) throws {
        let fd = open(path, flags | O_CLOEXEC, mode)
        guard fd >= 0 else { throw SystemCallError("open") }
        descriptor = fd
    }

    /// Opens `path` for reading without blocking (a FIFO or device swapped in for a file would block a plain
    /// `open`), and returns it with its status, taken from the open descriptor so that it describes the file that
    /// will be read, whatever the path names by then. Reads block as usual afterwards.
    static func openForReading(path: String) throws -> (OpenFile, FileStatus) {
        let file = try OpenFile(path: path, flags: O_RDONLY | O_NONBLOCK)
        let status = try file.status()
        let flags = fcntl(file.descriptor, F_GETFL)
        if flags >= 0 { _ = fcntl(file.descriptor, F_SETFL, flags & ~O_NONBLOCK) }
        return (file, status)
    }

    /// Wraps a descriptor this object now owns.
    init(owning descriptor: Int32) { self.descriptor = descriptor }

    deinit { close() }

    /// The file's status now.
    func status() throws -> FileStatus {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw SystemCallError("fstat") }
        return FileStatus(info)
    }

    /// Reads up to `buffer.count` bytes; 0 means the end of the file.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            let count = systemRead(descriptor, base, buffer.count)
            if count >= 0 { return count }
            if errno != EINTR { throw SystemCallError("read") }
        }
    }

    /// Moves the file's position `count` bytes on.
    func seek(by count: Int64) throws {
        guard lseek(descriptor, off_t(count), SEEK_CUR) >= 0 else { throw SystemCallError("lseek") }
    }

    /// Appends up to `limit` bytes of the file to `output` (at most its free capacity); returns how many, 0 at the
    /// end of the file.
    func read(into output: inout OutputRawSpan, atMost limit: Int = .max) throws -> Int {
        try output.appendWritten(atMost: limit) { try read(into: $0) }
    }

    /// Writes all of `bytes`.
    func write(_ bytes: Span<UInt8>) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Writes all of `buffer`.
    func write(_ buffer: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < buffer.count {
            let count = systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if count < 0 {
                if errno == EINTR { continue }
                throw SystemCallError("write")
            }
            offset += count
        }
    }

    /// Copies up to `count` bytes from this file's position to `destination`'s inside the kernel, advancing both
    /// positions, so that the bytes never pass through this process (Linux's `copy_file_range`, which the file
    /// system may turn into a shared extent). Returns how many, 0 at this file's end, or nil when the kernel will
    /// not copy between these two: another file system on kernels before 5.19, a destination that is not a regular
    /// file (a pipe, a socket), one opened for appending, or a system without the call. The caller then reads and
    /// writes as usual from the same positions.
    func copyInKernel(to destination: OpenFile, atMost count: Int) throws -> Int? {
        #if os(Linux)
        guard let copyFileRange = KernelCopy.copyFileRange else { return nil }
        while true {
            let copied = copyFileRange(descriptor, nil, destination.descriptor, nil, count, 0)
            if copied >= 0 { return copied }
            switch errno {
            case EINTR: continue
            case EXDEV, EINVAL, ENOSYS, EOPNOTSUPP, EBADF, ETXTBSY: return nil
            default: throw SystemCallError("copy_file_range")
            }
        }
        #else
        return nil
        #endif
    }

    /// Flushes the file's data and metadata to the disk (`fsync`).
    func synchronize() throws {
        while fsync(descriptor) != 0 {
            if errno != EINTR { throw SystemCallError("fsync") }
        }
    }

    /// Tells the kernel the file will be read once, front to back, so it reads ahead further.
    func adviseSequential() {
        #if os(Linux)
        _ = posix_fadvise(descriptor, 0, 0, Int32(POSIX_FADV_SEQUENTIAL))
        #endif
    }

    /// Gives up ownership without closing, for a descriptor that belongs to the caller.
    func release() { descriptor = -1 }

    func close() {
        guard descriptor >= 0 else { return }
        _ = systemClose(descriptor)
        descriptor = -1
    }
}

private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(fd, buffer, count)
}

private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, buffer, count)
}

private func systemClose(_ fd: Int32) -> Int32 {
    close(fd)
}

#if os(Linux)
/// `copy_file_range(2)`, which glibc declares only under `_GNU_SOURCE` and Swift's Glibc module therefore does not
/// show: looked up once in the C library (glibc 2.27 or later), nil where it is missing.
private enum KernelCopy {
    typealias Function =
        @convention(c) (
            Int32, UnsafeMutablePointer<Int64>?, Int32, UnsafeMutablePointer<Int64>?, Int, UInt32
        ) -> Int

    static let copyFileRange: Function? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "copy_file_range") else { return nil }
        return unsafeBitCast(symbol, to: Function.self)
    }()
}
#endif
