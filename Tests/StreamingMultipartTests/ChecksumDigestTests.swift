import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// CRC-32C and CRC-32 as spool digests: the standard check values, a bit-at-a-time reference at every length and
/// start around the three-stream blocks (3 × 4 KiB), any split of the input, Python's `crc32c` and `zlib` on the
/// same bytes, and the spooler's digest of an upload.
@Suite struct ChecksumDigestTests {
    /// The CRC bit by bit, the definition: `polynomial` reflected, initial value and final XOR all ones.
    static func reference(_ bytes: some Sequence<UInt8>, polynomial: UInt32) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ polynomial : crc >> 1 }
        }
        return ~crc
    }

    static let castagnoli: UInt32 = 0x82F6_3B78
    static let ieee: UInt32 = 0xEDB8_8320
    static let random: [UInt8] = {
        var generator = SeededGenerator(seed: 32)
        return generator.bytes(3 * 4096 * 2 + 100)
    }()

    static func crc<Digest: SpoolDigest>(_: Digest.Type, _ pieces: [ArraySlice<UInt8>]) -> [UInt8] {
        var digest = Digest()
        for piece in pieces { digest.update(piece.span) }
        return digest.finalize()
    }

    @Test func checkValues() {
        let check = Array("123456789".utf8)
        #expect(Self.crc(CRC32CDigest.self, [check[...]]) == [0xE3, 0x06, 0x92, 0x83])
        #expect(Self.crc(CRC32Digest.self, [check[...]]) == [0xCB, 0xF4, 0x39, 0x26])
        #expect(Self.crc(CRC32CDigest.self, []) == [0, 0, 0, 0])
        #expect(CRC32CDigest.algorithm == "crc32c" && CRC32Digest.algorithm == "crc32")
    }

    /// Lengths and starts across the ragged head (alignment), whole three-stream blocks and the tail.
    @Test(arguments: [0, 1, 7, 8, 9, 4095, 12_287, 12_288, 12_289, 12_295, 24_576, 24_676])
    func matchesTheBitwiseReference(length: Int) {
        for start in [0, 1, 3, 7] where start + length <= Self.random.count {
            let bytes = Self.random[start..<(start + length)]
            var c = CRC32CDigest()
            c.update(bytes.span)
            var z = CRC32Digest()
            z.update(bytes.span)
            let castagnoli = Self.reference(bytes, polynomial: Self.castagnoli)
            #expect(c.value == castagnoli, "crc32c, \(length) at \(start)")
            #expect(CRC32CDigest.tableValue(bytes.span) == castagnoli, "crc32c on the table, \(length) at \(start)")
            #expect(z.value == Self.reference(bytes, polynomial: Self.ieee), "crc32, \(length) at \(start)")
        }
    }

    @Test func anySplitGivesTheSameCRC() {
        let whole = Self.crc(CRC32CDigest.self, [Self.random[...]])
        for cut in [1, 8, 4096, 12_288, 12_289, 20_000] {
            let pieces = [Self.random[..<cut], Self.random[cut...]]
            #expect(Self.crc(CRC32CDigest.self, pieces) == whole, "cut at \(cut)")
            #expect(Self.crc(CRC32Digest.self, pieces) == Self.crc(CRC32Digest.self, [Self.random[...]]))
        }
    }

    @Test(
        .enabled(if: Peers.python3(with: ["crc32c", "zlib"]) != nil, "needs python3 with crc32c (.ci/run installs it)"))
    func matchesPythonsCRCs() throws {
        let python = try #require(Peers.python3(with: ["crc32c", "zlib"]))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("crc-\(UUID().uuidString).bin")
        defer { try? FileManager.default.removeItem(at: file) }
        var generator = SeededGenerator(seed: 33)
        let bytes = generator.bytes(1 << 20 | 13)
        try Data(bytes).write(to: file)
        let script =
            "import sys, zlib, crc32c; b = open(sys.argv[1], 'rb').read(); "
            + "print('%08x %08x' % (crc32c.crc32c(b), zlib.crc32(b)))"
        let result = try runProgram(python, ["-c", script, file.path])
        let expected = result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        let hex = { (digest: [UInt8]) in digest.map { String(format: "%02x", $0) }.joined() }
        #expect(result.status == 0)
        #expect(
            hex(Self.crc(CRC32CDigest.self, [bytes[...]])) + " " + hex(Self.crc(CRC32Digest.self, [bytes[...]]))
                == expected)
    }

    @Test func theSpoolerDigestsAnUploadWithEither() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var body = MultipartBody(boundary: try MultipartBoundary("crc-test"))
        try body.append(.data(Data(Self.random), name: "f", filename: "f.bin"))
        let bytes = try body.bytes()
        for digest in [CRC32CDigest.self, CRC32Digest.self] as [any SpoolDigest.Type] {
            let spooler = MultipartSpooler(directory: folder.url, limits: .untimed, digest: digest)
            try await spooler.withSpooledForm(chunkStream(bytes, size: 4093), contentType: body.contentType) { form in
                let file = try #require(form.files.first)
                let polynomial = digest == CRC32CDigest.self ? Self.castagnoli : Self.ieee
                let value = Self.reference(Self.random, polynomial: polynomial)
                #expect(file.digest?.algorithm == digest.algorithm)
                #expect(file.digest?.hex == String(format: "%08x", value))
            }
        }
    }
}
