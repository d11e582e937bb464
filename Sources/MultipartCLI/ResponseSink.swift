import Foundation
import NIOCore
import NIOFoundationCompat  // ByteBufferView as DataProtocol, written without a copy

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where `multipart send` writes the response body: standard output, or the path given with `-o`, opened as curl
/// opens it: created under the umask or truncated, and a device or a pipe (`/dev/null`) written to as it is.
struct ResponseSink {
    private let handle: FileHandle
    private let path: String

    init(path: String?) throws {
        guard let path, path != "-" else {
            (handle, self.path) = (FileHandle.standardOutput, "standard output")
            return
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            throw SendFailure(
                exitCode: 23, message: "cannot open \(path) for writing: \(String(cString: strerror(errno)))")
        }
        (handle, self.path) = (FileHandle(fileDescriptor: descriptor, closeOnDealloc: true), path)
    }

    func write(_ buffer: ByteBuffer) throws {
        do {
            try handle.write(contentsOf: buffer.readableBytesView)
        } catch {
            throw SendFailure.writeFailed(path, error)
        }
    }

    func close() throws {
        guard handle !== FileHandle.standardOutput else { return }
        do { try handle.close() } catch { throw SendFailure.writeFailed(path, error) }
    }
}
