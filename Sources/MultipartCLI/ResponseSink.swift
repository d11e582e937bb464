import Foundation
import NIOCore
import NIOFoundationCompat  // ByteBufferView as DataProtocol, written without a copy

/// Where `multipart send` writes the response body: standard output, or a file given with `-o`, created or
/// truncated as curl does.
struct ResponseSink {
    private let handle: FileHandle
    private let path: String

    init(path: String?) throws {
        guard let path, path != "-" else {
            (handle, self.path) = (FileHandle.standardOutput, "standard output")
            return
        }
        guard
            FileManager.default.createFile(atPath: path, contents: nil) || FileManager.default.fileExists(atPath: path),
            let handle = FileHandle(forWritingAtPath: path)
        else {
            throw SendFailure(exitCode: 23, message: "cannot open \(path) for writing")
        }
        try? handle.truncate(atOffset: 0)
        (self.handle, self.path) = (handle, path)
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
