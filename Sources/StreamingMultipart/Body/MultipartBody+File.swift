public import Foundation

extension MultipartBody {
    /// The block `write(to:)` reads the body through: large, so file parts the kernel does not copy go in 1 MiB blocks.
    static let fileWriteBlockSize = 1 << 20
    /// The block `write(toFileDescriptor:)` writes in: 64 KiB, a pipe's and a socket buffer's size.
    static let descriptorWriteBlockSize = 64 * 1024

    /// Writes the whole body to a file, atomically, and returns its length.
    ///
    /// The body goes to a new temporary file in the same folder (`permissions`, by default readable and writable
    /// by the owner only, since upload bodies often hold private data), which is flushed to disk and renamed over
    /// `url` once complete: `url` gets the whole body or is left as it was, even after a crash, and no temporary
    /// file is left behind. This is the path for `URLSession.uploadTask(with:fromFile:)` and background sessions,
    /// which send it with an exact `Content-Length` on every platform.
    ///
    /// File parts go from their file into the body's inside the kernel where it can (`copy_file_range` on Linux), so
    /// a large file never passes through this process; the rest of the body, compressed bodies, and bodies whose
    /// boundary you chose (their files are watched for it) go through one 1 MiB block. Apple platforms have no call
    /// that copies part of one file into another at a position (`clonefile` and `fcopyfile` copy whole files, and a
    /// body file is never a copy of one), so there file parts go through the block too.
    ///
    /// ```swift
    /// let length = try body.write(to: uploadsFolder.appendingPathComponent("upload.body"))
    /// request.setValue(String(length), forHTTPHeaderField: "Content-Length")
    /// ```
    ///
    /// - Parameters:
    ///   - url: the file to write; its folder must exist.
    ///   - permissions: the new file's mode, masked by the process's umask: `0o600` (the default) for the owner
    ///     alone, `0o666` for the usual mode of a new file (what `multipart build -o` uses, as curl does).
    ///   - compression: compresses the body; the returned length is then the exact compressed length, for the
    ///     `Content-Length` of a file-backed upload with `Content-Encoding`.
    /// - Returns: the bytes written, equal to ``contentLength`` when that is known and the body is not compressed.
    /// - Throws: ``MultipartError/Code/writeFailed`` when the folder is not writable or the disk fills, with the
    ///   ``SystemCallError`` as its cause; any error of reading the body (``BodyReader``'s `read(into:)`).
    @discardableResult
    public func write(to url: URL, permissions: Int = 0o600, compression: Compression? = nil) throws -> Int64 {
        let temporary: TemporaryFile
        do {
            temporary = try TemporaryFile(besides: url.path, permissions: mode_t(permissions & 0o7777))
        } catch {
            throw MultipartError(
                code: .writeFailed, message: "cannot create a temporary file beside \(url.path)", cause: error)
        }
        let written = try write(to: temporary.file, blockSize: Self.fileWriteBlockSize, compression: compression)
        do {
            try temporary.commit(to: url.path)
        } catch {
            throw MultipartError(
                code: .writeFailed, message: "cannot move the finished body to \(url.path)", cause: error)
        }
        return written
    }

    /// Writes the whole body to an open file in blocks of `blockSize`; file parts go inside the kernel where it can
    /// copy them into `file` (``BodyReader``'s `copyFileContent(to:)`), the rest through one block.
    func write(to file: OpenFile, blockSize: Int, compression: Compression? = nil) throws -> Int64 {
        var reader = makeReader(compression: compression)
        var block: [UInt8] = []
        block.reserveCapacity(blockSize)
        var kernelCopies = true
        while true {
            if kernelCopies {
                switch try reader.copyFileContent(to: file) {
                case .copied: continue
                case .refused: kernelCopies = false
                case .notHere: break
                }
            }
            block.removeAll(keepingCapacity: true)
            let count = try block.append(capacity: blockSize) { try reader.read(into: &$0) }
            if count == 0 { return reader.bytesRead }
            do {
                try block.withSpan { try file.write($0) }
            } catch {
                throw MultipartError(
                    code: .writeFailed,
                    message: "writing the body failed after \(reader.bytesRead - Int64(count)) bytes",
                    offset: reader.bytesRead - Int64(count), cause: error)
            }
        }
    }

    /// Writes the whole body to an open file descriptor (a pipe, a socket, standard output) in 64 KiB writes,
    /// without closing it, and returns its length. Unlike ``write(to:permissions:compression:)``, a failure leaves what
    /// was written so far.
    @discardableResult
    public func write(toFileDescriptor descriptor: Int32, compression: Compression? = nil) throws -> Int64 {
        let file = OpenFile(owning: descriptor)
        defer { file.release() }
        return try write(to: file, blockSize: Self.descriptorWriteBlockSize, compression: compression)
    }
}
