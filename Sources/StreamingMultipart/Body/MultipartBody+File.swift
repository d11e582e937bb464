#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
public import Foundation

extension MultipartBody {
    /// The block `write(to:)` reads the body through: large, so file parts are read in 1 MiB blocks.
    static let fileWriteBlockSize = 1 << 20
    /// The block `write(toFileDescriptor:)` writes in: 64 KiB, a pipe's and a socket buffer's size.
    static let descriptorWriteBlockSize = 64 * 1024

    /// Writes the whole body to a file, atomically, and returns its length.
    ///
    /// The body goes to a temporary file in the same folder (readable and writable by the owner only, since upload
    /// bodies often hold private data), which is renamed over `url` once complete: `url` gets the whole body or is
    /// left as it was, and no temporary file is left behind. This is the path for
    /// `URLSession.uploadTask(with:fromFile:)` and background sessions, which send it with an exact
    /// `Content-Length` on every platform.
    ///
    /// ```swift
    /// let length = try body.write(to: uploadsFolder.appendingPathComponent("upload.body"))
    /// request.setValue(String(length), forHTTPHeaderField: "Content-Length")
    /// ```
    ///
    /// - Returns: the bytes written, equal to ``contentLength`` when that is known.
    /// - Throws: ``MultipartError/Code/writeFailed`` when the folder is not writable or the disk fills; any error
    ///   of reading the body (``BodyReader/read(into:)``).
    @discardableResult
    public func write(to url: URL) throws -> Int64 {
        let folder = url.deletingLastPathComponent().path
        var template = Array((folder.isEmpty ? "." : folder).utf8CString.dropLast())
        template += Array("/.\(url.lastPathComponent).XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw MultipartError(
                code: .writeFailed, message: "cannot create a temporary file in \(folder)",
                cause: SystemCallError("mkstemp"))
        }
        let temporaryPath = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        let file = OpenFile(owning: descriptor)
        do {
            let written = try write(to: file, blockSize: Self.fileWriteBlockSize)
            file.close()
            guard rename(temporaryPath, url.path) == 0 else {
                throw MultipartError(
                    code: .writeFailed, message: "cannot rename the finished body to \(url.path)",
                    cause: SystemCallError("rename"))
            }
            return written
        } catch {
            file.close()
            unlink(temporaryPath)
            throw error
        }
    }

    /// Writes the whole body to an open file in blocks of `blockSize`.
    func write(to file: OpenFile, blockSize: Int) throws -> Int64 {
        var reader = makeReader()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: blockSize, alignment: 4096)
        defer { buffer.deallocate() }
        while true {
            let count = try reader.read(into: buffer)
            if count == 0 { return reader.bytesRead }
            do {
                try file.write(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            } catch {
                throw MultipartError(
                    code: .writeFailed, message: "writing the body failed after \(reader.bytesRead - Int64(count)) bytes",
                    offset: reader.bytesRead - Int64(count), cause: error)
            }
        }
    }

    /// Writes the whole body to an open file descriptor (a pipe, a socket, standard output) in 64 KiB writes,
    /// without closing it, and returns its length. Unlike ``write(to:)``, a failure leaves what was written so far.
    @discardableResult
    public func write(toFileDescriptor descriptor: Int32) throws -> Int64 {
        let file = OpenFile(owning: descriptor)
        defer { file.release() }
        return try write(to: file, blockSize: Self.descriptorWriteBlockSize)
    }
}
