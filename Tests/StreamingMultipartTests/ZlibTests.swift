import Foundation
import MultipartTestSupport
import Testing

@testable import StreamingMultipart

/// The zlib stage alone: round trips, every chunking, the peers' data both ways, and each kind of bad input.
@Suite struct ZlibTests {
    /// Compresses `bytes` fed in pieces of `inputChunk`, into outputs of `outputChunk`.
    static func compress(
        _ bytes: [UInt8], format: CompressionFormat, level: Int = 6, inputChunk: Int = 1 << 20, outputChunk: Int = 65536
    ) throws -> [UInt8] {
        var compressor = try ZlibCompressor(format: format, level: level)
        var compressed: [UInt8] = []
        var offset = 0
        while true {
            let end = min(offset + inputChunk, bytes.count)
            let finishing = end == bytes.count
            let input = bytes[offset..<end]
            let before = compressed.count
            let step = try compressed.append(capacity: outputChunk) {
                try compressor.compress(input.span, into: &$0, finishing: finishing)
            }
            #expect(compressed.count - before == step.produced)
            offset += step.consumed
            if step.isFinished { return compressed }
        }
    }

    /// Decompresses `bytes` fed in pieces of `inputChunk`, into outputs of `outputChunk`.
    static func decompress(
        _ bytes: [UInt8], format: CompressionFormat, inputChunk: Int = 1 << 20, outputChunk: Int = 65536
    ) throws -> [UInt8] {
        var decompressor = ZlibDecompressor(format: format)
        var result: [UInt8] = []
        var offset = 0
        repeat {
            let end = min(offset + inputChunk, bytes.count)
            var input = bytes[offset..<end]
            offset = end
            repeat {
                let chunk = input
                let before = result.count
                let step = try result.append(capacity: outputChunk) {
                    try decompressor.decompress(chunk.span, into: &$0)
                }
                #expect(result.count - before == step.produced)
                input = input.dropFirst(step.consumed)
            } while !input.isEmpty || decompressor.hasPendingOutput
        } while offset < bytes.count
        try decompressor.finish()
        return result
    }

    static func sample(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
        var random = SeededGenerator(seed: seed)
        let words = ["name", "field", "value", "Content-Disposition", "form-data", "\r\n", "--boundary", "é"]
        var bytes: [UInt8] = []
        while bytes.count < count { bytes += Array(words[Int(random.next() % UInt64(words.count))].utf8) + [32] }
        return Array(bytes.prefix(count))
    }

    @Test(arguments: [CompressionFormat.gzip, .zlib, .rawDeflate])
    func roundTripsAtEveryLevelAndSize(format: CompressionFormat) throws {
        for size in [0, 1, 1000, 300_000] {
            let bytes = Self.sample(size)
            for level in [0, 1, 6, 9] {
                let compressed = try Self.compress(bytes, format: format, level: level)
                #expect(
                    try Self.decompress(compressed, format: format) == bytes, "\(format) level \(level) size \(size)")
            }
        }
    }

    /// One byte at a time in and out, and every other small chunking: the same bytes.
    @Test(arguments: [CompressionFormat.gzip, .zlib, .rawDeflate])
    func everyChunkingGivesTheSameBytes(format: CompressionFormat) throws {
        let bytes = Self.sample(20_000, seed: 3)
        let whole = try Self.compress(bytes, format: format)
        for (inputChunk, outputChunk) in [(1, 1), (1, 7), (3, 1), (7, 64), (64, 3), (4096, 17)] {
            #expect(
                try Self.compress(bytes, format: format, inputChunk: inputChunk, outputChunk: outputChunk) == whole,
                "compress \(inputChunk)/\(outputChunk)")
            #expect(
                try Self.decompress(whole, format: format, inputChunk: inputChunk, outputChunk: outputChunk) == bytes,
                "decompress \(inputChunk)/\(outputChunk)")
        }
    }

    @Test func concatenatedGzipMembersAreReadInFull() throws {
        let first = Self.sample(5000, seed: 4)
        let second = Self.sample(7000, seed: 5)
        let joined = try Self.compress(first, format: .gzip) + Self.compress(second, format: .gzip)
        for chunk in [1, 13, 1 << 20] {
            #expect(try Self.decompress(joined, format: .gzip, inputChunk: chunk) == first + second)
        }
    }

    @Test(arguments: [CompressionFormat.gzip, .zlib, .rawDeflate])
    func truncatedInputIsAnErrorWithItsOffset(format: CompressionFormat) throws {
        let compressed = try Self.compress(Self.sample(50_000), format: format)
        let cut = Array(compressed.prefix(compressed.count / 2))
        let error = #expect(throws: MultipartError.self) { try Self.decompress(cut, format: format) }
        #expect(error?.code == .invalidCompressedData)
        #expect(error?.message.contains("truncated") == true, "\(String(describing: error))")
        #expect(error?.offset == Int64(cut.count))
    }

    @Test func aBadChecksumIsAnError() throws {
        for format in [CompressionFormat.gzip, .zlib] {
            var compressed = try Self.compress(Self.sample(10_000), format: format)
            let checksum = format == .gzip ? compressed.count - 8 : compressed.count - 4  // CRC32 / Adler-32
            compressed[checksum] ^= 0xFF
            let error = #expect(throws: MultipartError.self) { try Self.decompress(compressed, format: format) }
            #expect(error?.code == .invalidCompressedData, "\(format)")
            #expect(error?.message.contains("check") == true, "\(format): \(String(describing: error))")
        }
    }

    @Test(arguments: [CompressionFormat.gzip, .zlib, .rawDeflate])
    func trailingGarbageIsAnError(format: CompressionFormat) throws {
        let compressed = try Self.compress(Self.sample(1000), format: format) + Array("garbage".utf8)
        let error = #expect(throws: MultipartError.self) { try Self.decompress(compressed, format: format) }
        #expect(error?.code == .invalidCompressedData)
        #expect(error?.message.contains("after the end") == true, "\(String(describing: error))")
    }

    @Test func corruptDataAndEmptyInputAreErrors() throws {
        let notGzip = #expect(throws: MultipartError.self) {
            try Self.decompress(Array("plain text, not gzip".utf8), format: .gzip)
        }
        #expect(notGzip?.code == .invalidCompressedData && notGzip?.offset != nil)
        // Said in words a client can read, never zlib's constant names.
        #expect(notGzip?.message == "the gzip data is invalid: incorrect header check", "\(notGzip!)")
        let corrupt = #expect(throws: MultipartError.self) {
            var bytes = try Self.compress(Array(repeating: 0x61, count: 10_000), format: .rawDeflate)
            bytes[0] = 0xFF
            return try Self.decompress(bytes, format: .rawDeflate)
        }
        #expect(corrupt?.message.contains("Z_") == false, "\(corrupt!)")
        #expect(corrupt?.message.contains(" data is invalid: ") == true, "\(corrupt!)")
        let empty = #expect(throws: MultipartError.self) { try Self.decompress([], format: .zlib) }
        #expect(empty?.code == .invalidCompressedData)
        let level = #expect(throws: MultipartError.self) { _ = try ZlibCompressor(format: .gzip, level: 10) }
        #expect(level?.code == .compressionFailed)
    }

    /// Python's gzip and zlib modules read what we write, and we read what they write, at levels 1, 6 and 9.
    @Test(.enabled(if: Peers.python3(with: ["gzip", "zlib"]) != nil, "needs python3"))
    func pythonReadsOursAndWeReadPythons() throws {
        let python = try #require(Peers.python3(with: ["gzip", "zlib"]))
        let decode = """
            import sys, gzip, zlib
            data = sys.stdin.buffer.read()
            fmt = sys.argv[1]
            out = gzip.decompress(data) if fmt == 'gzip' else zlib.decompress(data, 15 if fmt == 'zlib' else -15)
            sys.stdout.buffer.write(out)
            """
        let encode = """
            import sys, gzip, zlib
            data = sys.stdin.buffer.read()
            fmt, level = sys.argv[1], int(sys.argv[2])
            if fmt == 'gzip':
                out = gzip.compress(data, compresslevel=level)
            else:
                c = zlib.compressobj(level, zlib.DEFLATED, 15 if fmt == 'zlib' else -15)
                out = c.compress(data) + c.flush()
            sys.stdout.buffer.write(out)
            """
        for (format, bytes) in [CompressionFormat.gzip, .zlib, .rawDeflate].flatMap({ format in
            [[], [42], Self.sample(200_000, seed: 8)].map { (format, $0) }
        }) {
            let name = "\(format)"
            for level in [1, 6, 9] {
                let ours = try Self.compress(bytes, format: format, level: level)
                let read = try runProgram(python, ["-c", decode, name], input: ours)
                #expect(read.status == 0 && read.stdout == bytes, "python read our \(name) \(level): \(read.stderr)")
                let theirs = try runProgram(python, ["-c", encode, name, String(level)], input: bytes)
                #expect(theirs.status == 0, "\(theirs.stderr)")
                #expect(
                    try Self.decompress(theirs.stdout, format: format, inputChunk: 1000) == bytes, "\(name) \(level)")
            }
        }
    }

    /// 100 MB both ways with Python's gzip module, fed in 64 KiB chunks.
    @Test(.enabled(if: Peers.python3(with: ["gzip"]) != nil, "needs python3"))
    func aHundredMegabytesBothWays() throws {
        let python = try #require(Peers.python3(with: ["gzip"]))
        let block = Self.sample(1 << 20, seed: 10)
        let bytes = (0..<100).flatMap { index in block.map { $0 &+ UInt8(index) } }
        let ours = try Self.compress(bytes, format: .gzip, level: 1, inputChunk: 65536)
        let code =
            "import sys, gzip, hashlib; print(hashlib.sha256(gzip.decompress(sys.stdin.buffer.read())).hexdigest())"
        let read = try runProgram(python, ["-c", code], input: ours)
        #expect(read.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == sha256Hex(bytes))
        let theirs = try runProgram(
            python, ["-c", "import sys, gzip; sys.stdout.buffer.write(gzip.compress(sys.stdin.buffer.read(), 1))"],
            input: bytes)
        #expect(try Self.decompress(theirs.stdout, format: .gzip, inputChunk: 65536) == bytes)
    }

    /// The `gzip` command reads ours and writes what we read.
    @Test(.enabled(if: executableOnPath("gzip") != nil, "needs the gzip command"))
    func theGzipCommandAgrees() throws {
        let gzip = try #require(executableOnPath("gzip"))
        let bytes = Self.sample(100_000, seed: 9)
        let ours = try runProgram(gzip, ["-d", "-c"], input: try Self.compress(bytes, format: .gzip))
        #expect(ours.status == 0 && ours.stdout == bytes, "\(ours.stderr)")
        for level in ["-1", "-6", "-9"] {
            let theirs = try runProgram(gzip, [level, "-c"], input: bytes)
            #expect(try Self.decompress(theirs.stdout, format: .gzip, inputChunk: 4096) == bytes, "gzip \(level)")
        }
    }
}
