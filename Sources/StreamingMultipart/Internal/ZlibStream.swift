import CZlib

/// One `z_stream`, on the heap (zlib keeps a pointer back to it, so it must never move), with the direction it was
/// initialized for. ``ZlibCompressor`` and ``ZlibDecompressor`` own one each and free it in their `deinit`.
struct ZlibStream {
    enum Direction { case compress, decompress }

    let pointer: UnsafeMutablePointer<z_stream>
    let direction: Direction

    /// Why zlib could not start a stream (no memory, a bad level): zlib's name for its status.
    struct StartFailure: Error {
        let description: String
    }

    /// - Parameter windowBits: zlib's `windowBits`, which also chooses the wrapper (gzip, zlib or none).
    /// - Throws: ``StartFailure`` when zlib cannot start.
    init(_ direction: Direction, windowBits: Int32, level: Int32 = Z_DEFAULT_COMPRESSION) throws(StartFailure) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: z_stream())
        self.direction = direction
        let status: Int32
        switch direction {
        case .compress:
            status = czlib_deflateInit2(pointer, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY)
        case .decompress:
            status = czlib_inflateInit2(pointer, windowBits)
        }
        guard status == Z_OK else {
            pointer.deinitialize(count: 1)
            pointer.deallocate()
            throw StartFailure(description: Self.describe(status, nil))
        }
    }

    /// Frees zlib's state and the stream. Call once.
    func free() {
        switch direction {
        case .compress: deflateEnd(pointer)
        case .decompress: inflateEnd(pointer)
        }
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }

    /// Points the stream at `input` and the free capacity of `output`, runs `step`, appends what zlib wrote to
    /// `output`, and returns zlib's status and how many bytes it took and gave.
    func run(
        _ input: Span<UInt8>, into output: inout OutputRawSpan, _ step: (z_streamp) -> Int32
    ) -> (status: Int32, consumed: Int, produced: Int) {
        let stream = pointer
        var status = Z_OK
        var consumed = 0
        let produced = input.withUnsafeBufferPointer { input in
            output.appendWritten(atMost: Int(UInt32.max)) { room in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.pointee.avail_in = uInt(clamping: input.count)
                stream.pointee.next_out = room.baseAddress?.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(clamping: room.count)
                status = step(stream)
                consumed = Int(uInt(clamping: input.count) - stream.pointee.avail_in)
                let produced = Int(uInt(room.count) - stream.pointee.avail_out)
                stream.pointee.next_in = nil
                stream.pointee.next_out = nil
                return produced
            }
        }
        return (status, consumed, produced)
    }

    /// Starts the stream over for a new stream of the same format (the next gzip member).
    func reset() { inflateReset(pointer) }

    /// Starts the stream over with other `windowBits` (another wrapper).
    func reset(windowBits: Int32) { inflateReset2(pointer, windowBits) }

    /// What went wrong, in words a client can read: zlib's own message when it left one ("incorrect header
    /// check", "invalid distance too far back"), else the status said in words; never zlib's constant names.
    func describe(_ status: Int32) -> String { Self.describe(status, pointer.pointee.msg) }

    private static func describe(_ status: Int32, _ message: UnsafePointer<CChar>?) -> String {
        if let message, message.pointee != 0 { return String(cString: message) }
        return switch status {
        case Z_DATA_ERROR: "the data is corrupt"
        case Z_NEED_DICT: "the data needs a preset dictionary, which is not supported"
        case Z_MEM_ERROR: "out of memory"
        case Z_BUF_ERROR: "no progress was possible"
        case Z_STREAM_ERROR: "the stream's state is inconsistent"
        case Z_VERSION_ERROR: "the zlib library is of another version"
        default: "zlib failed with status \(status)"
        }
    }
}
