import Foundation

extension InputStream {
    /// Reads up to `limit` bytes (at most `output.freeCapacity`) into `output`, as `read(_:maxLength:)` does: the
    /// count read, 0 at the end of the stream, or a negative number on an error (`streamError` says which).
    func read(into output: inout OutputRawSpan, atMost limit: Int) -> Int {
        var result = 0
        _ = output.appendWritten(atMost: limit) { buffer in
            guard let base = buffer.baseAddress, !buffer.isEmpty else { return 0 }
            result = read(base.assumingMemoryBound(to: UInt8.self), maxLength: buffer.count)
            return max(result, 0)
        }
        return result
    }
}
