#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The parse benchmark bodies, built in memory, shaped like `Peers/gen_fixtures.py`' F1–F4 (same boundary).
public enum ParseFixtures {
    public static let boundary = "----WebKitFormBoundary7MA4YWxkTrZu0gW"

    /// A body and what a correct parse of it finds.
    public struct Body: Sendable {
        public let bytes: [UInt8]
        public let parts: Int
        public let bodyBytes: Int
    }

    /// F1 to F4 with their names, as both parser suites run them.
    public static func all() -> [(name: String, body: Body)] {
        [
            ("F1 one 256 MiB part", oneLargePart()),
            ("F2 100,000 fields", manyFields()),
            ("F3 1,000 files of 64 KiB", manyFiles()),
            ("F4 64 MiB of delimiter near-misses", nearMisses()),
        ]
    }

    /// F1: one file part of 256 MiB of random bytes.
    public static func oneLargePart(size: Int = 256 << 20) -> Body {
        var random = SplitMix(seed: 1)
        return body(files: [random.bytes(size)], fields: [])
    }

    /// F2: 100,000 text fields `fieldN` of 20 to 40 ASCII bytes.
    public static func manyFields(count: Int = 100_000) -> Body {
        var random = SplitMix(seed: 2)
        let fields = (0..<count).map { _ in
            (0..<(20 + Int(random.next() % 21))).map { _ in UInt8(97 + random.next() % 26) }
        }
        return body(files: [], fields: fields)
    }

    /// 100,000 text fields of 20 to 40 ASCII bytes under ten list names, `f0[]` to `f9[]` in turn: the form a typed
    /// decoder reads into ten `[String]` properties.
    public static func listFields(count: Int = 100_000) -> Body {
        var random = SplitMix(seed: 2)
        let fields = (0..<count).map { _ in
            (0..<(20 + Int(random.next() % 21))).map { _ in UInt8(97 + random.next() % 26) }
        }
        return body(files: [], fields: fields, name: { "f\($0 % 10)[]" })
    }

    /// F3: 1,000 file parts of 64 KiB of random bytes.
    public static func manyFiles(count: Int = 1000, size: Int = 64 << 10) -> Body {
        var random = SplitMix(seed: 3)
        return body(files: (0..<count).map { _ in random.bytes(size) }, fields: [])
    }

    /// F4: one part of 64 MiB of delimiter near-misses: the delimiter minus its last byte, `\r\n-`, runs of
    /// dashes, half boundaries, the boundary after a bare CR or LF with a letter after it (with a line break after
    /// it, a reader would take it for a delimiter), and random filler.
    public static func nearMisses(size: Int = 64 << 20) -> Body {
        var random = SplitMix(seed: 4)
        let pieces: [[UInt8]] = [
            Array("\r\n--\(boundary.dropLast())".utf8), Array("\r\n-".utf8), Array("\r\n-------".utf8),
            Array("\r\n--\(boundary.prefix(boundary.count / 2))".utf8), Array("\r--\(boundary)x".utf8),
            Array("\n--\(boundary)x".utf8),
        ]
        var content: [UInt8] = []
        content.reserveCapacity(size + 64)
        while content.count < size {
            if random.next() % 4 == 0 {
                // Filler holds no CR, LF or '-', and not the boundary's last byte, so no piece plus filler forms a
                // delimiter.
                let last = UInt8(ascii: boundary.unicodeScalars.last!)
                content += random.bytes(Int(random.next() % 16)).map {
                    $0 == 13 || $0 == 10 || $0 == UInt8(ascii: "-") || $0 == last ? 32 : $0
                }
            } else {
                content += pieces[Int(random.next() % UInt64(pieces.count))]
            }
        }
        content.removeSubrange(size...)
        // The body must stay one part: a near miss cut by the end must not become a delimiter with the close.
        content[size - 1] = UInt8(ascii: "x")
        return body(files: [content], fields: [])
    }

    static func body(files: [[UInt8]], fields: [[UInt8]], name: (Int) -> String = { "field\($0)" }) -> Body {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(files.reduce(0) { $0 + $1.count + 200 } + fields.count * 100)
        for (index, field) in fields.enumerated() {
            bytes += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name(index))\"\r\n\r\n".utf8)
            bytes += field
            bytes += [13, 10]
        }
        for (index, file) in files.enumerated() {
            bytes += Array(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\(index)\"; filename=\"f\(index).bin\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                    .utf8)
            bytes += file
            bytes += [13, 10]
        }
        bytes += Array("--\(boundary)--\r\n".utf8)
        return Body(
            bytes: bytes, parts: files.count + fields.count,
            bodyBytes: files.reduce(0) { $0 + $1.count } + fields.reduce(0) { $0 + $1.count })
    }
}

/// SplitMix64: fast, seeded, good enough for benchmark data.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func bytes(_ count: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        result.withUnsafeMutableBytes { buffer in
            var index = 0
            while index + 8 <= count {
                buffer.storeBytes(of: next(), toByteOffset: index, as: UInt64.self)
                index += 8
            }
            while index < count {
                buffer[index] = UInt8(truncatingIfNeeded: next())
                index += 1
            }
        }
        return result
    }
}
