import MultipartTestSupport
import Testing

@testable import StreamingMultipart

/// Decoding hostile shapes grows linearly with the form: four times the fields must take well under eight times
/// the thread CPU time (a quadratic step gives sixteen). The forms are built in memory, past the spooler's limits,
/// to load the decoder alone.
@Suite(.serialized) struct FormDecodingLinearTimeTests {
    struct Shape: CustomTestStringConvertible, Sendable {
        var name: String
        /// The field names of a form of `count` fields.
        var names: @Sendable (Int) -> [String]
        /// What the form is decoded as.
        var decode: @Sendable (MultipartFormDecoder, SpooledForm) throws -> Void
        var testDescription: String { name }
    }

    static let shapes = [
        Shape(
            name: "one list of `[]` items", names: { Array(repeating: "a[]", count: $0) },
            decode: { _ = try $0.decode(Lists.self, from: $1) }),
        Shape(
            name: "a repeated name", names: { Array(repeating: "a", count: $0) },
            decode: { _ = try $0.decode([String: [String]].self, from: $1) }),
        Shape(
            name: "indexes in reverse", names: { count in (0..<count).reversed().map { "a[\($0)]" } },
            decode: { _ = try $0.decode([String: [String]].self, from: $1) }),
        Shape(
            name: "distinct keys", names: { count in (0..<count).map { "k\($0)" } },
            decode: { _ = try $0.decode([String: String].self, from: $1) }),
        Shape(
            name: "names 32 levels deep",
            names: { count in (0..<count / 32).map { "k\($0)" + String(repeating: "[a]", count: 31) } },
            decode: { decoder, form in
                _ = try FormNode.tree(
                    of: form, keyStrategy: .brackets, limits: decoder.limits)
            }),
    ]

    struct Lists: Decodable { var a: [String] }

    static func form(_ names: [String]) -> SpooledForm {
        let fields = names.enumerated().map { index, name in
            SpooledForm.Field(name: name, value: "x", bytes: [0x78], contentType: nil, partIndex: index)
        }
        return SpooledForm(fields: fields, files: [], charset: nil)
    }

    @Test(arguments: shapes)
    func decodingGrowsLinearly(shape: Shape) async throws {
        let decoder = {
            var decoder = MultipartFormDecoder()
            decoder.limits.maxListLength = .max
            return decoder
        }()
        let medium = Self.form(shape.names(50_000))
        let large = Self.form(shape.names(200_000))
        let run = { @Sendable (form: SpooledForm) throws -> Duration in
            try measureThreadCPUTime { try shape.decode(decoder, form) }.1
        }
        let growth = try await onThreadOfItsOwn {
            try linearGrowthRatio(limit: 8, medium: { try run(medium) }, large: { try run(large) })
        }
        #expect(growth.ratio < 8, "\(shape.name): \(growth.medium) for 50k fields, \(growth.large) for 200k")
    }
}

/// Decoding straight from the parts at 1, 16 and 64 MB: the collector's guess (the name that followed last time)
/// and its misses keep the time linear, whatever order the names come in. The time is
/// the CPU time of the one thread the decode runs on (a ``OneThreadExecutor``).
@Suite(.serialized) struct PartsDecodingLinearTimeTests {
    static let boundary = "b0undary"

    /// Names in turn (every guess right), scrambled over 200 names (most guesses wrong, then looked up), and all
    /// distinct (every name a miss).
    static let orders: [(String, @Sendable (Int) -> String)] = [
        ("ten names in turn", { "f\($0 % 10)[]" }),
        ("200 names scrambled", { "n\($0 &* 7919 % 200)" }),
        ("distinct names", { "k\($0)" }),
    ]

    static func body(megabytes: Int, name: (Int) -> String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(megabytes << 20 + 4096)
        var index = 0
        while bytes.count < megabytes << 20 {
            bytes += Array(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name(index))\"\r\n\r\nvalue \(index)\r\n"
                    .utf8)
            index += 1
        }
        return bytes + Array("--\(boundary)--\r\n".utf8)
    }

    /// `body` decoded into lists from its parts in chunks of 64 KiB, without the list and part limits, on a thread of
    /// its own: the lists and the CPU time the thread spent.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    static func decodeTime(of body: [UInt8]) async throws -> ([String: [String]], Duration) {
        var decoder = MultipartFormDecoder()
        decoder.limits.maxListLength = .max
        var limits = MultipartParser.Limits.default
        limits.maxParts = 10_000_000
        let chunks = chunkStream(body, size: 64 << 10)
        let executor = OneThreadExecutor()
        defer { executor.shutdown() }
        return try await measureThreadCPUTime(on: executor) { [decoder, limits] in
            let parts = try chunks.multipartParts(
                contentType: "multipart/form-data; boundary=\(Self.boundary)", limits: limits)
            return try await decoder.decode([String: [String]].self, from: parts, maxMemoryBytes: 1 << 30)
        }
    }

    @Test(.timeLimit(.minutes(10)), arguments: 0..<orders.count)
    func decodingFromThePartsGrowsLinearly(order: Int) async throws {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) else {
            throw MultipartError(code: .invalidState, message: "task executors need macOS 15")
        }
        let (label, name) = Self.orders[order]
        var counts: [Int] = []
        func run(_ megabytes: Int) async throws -> Duration {
            let (lists, time) = try await Self.decodeTime(of: Self.body(megabytes: megabytes, name: name))
            counts.append(lists.values.reduce(0) { $0 + $1.count })
            return time
        }
        let small = try await run(1)
        let growth = try await linearGrowthRatio(limit: 8, medium: { try await run(16) }, large: { try await run(64) })
        print("PartsDecodingLinearTimeTests: \(label): CPU time \(small), \(growth.medium), \(growth.large)")
        #expect(growth.ratio < 8, "\(label): 64 MB took \(growth.ratio)× the CPU time of 16 MB")
        #expect(counts.count >= 3 && counts[2] > counts[1] && counts[1] > counts[0])
    }

    /// Fields in Latin-1 bytes, then `_charset_` last: every field is read as UTF-8, then once more in ISO-8859-1
    /// when `_charset_` comes. The second reading is one pass over the fields, so the time stays linear.
    @Test(.timeLimit(.minutes(10)))
    func aLateCharsetReadsTheFieldsAgainInLinearTime() async throws {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) else {
            throw MultipartError(code: .invalidState, message: "task executors need macOS 15")
        }
        func body(megabytes: Int) -> [UInt8] {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(megabytes << 20 + 4096)
            var index = 0
            while bytes.count < megabytes << 20 {
                bytes += Array(
                    "--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"k\(index % 100)\"\r\n\r\n".utf8)
                bytes += [0x63, 0x61, 0x66, 0xE9] + Array(" \(index)\r\n".utf8)  // "café" in Latin-1
                index += 1
            }
            bytes += Array("--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"_charset_\"\r\n\r\n".utf8)
            return bytes + Array("iso-8859-1\r\n--\(Self.boundary)--\r\n".utf8)
        }
        func run(_ megabytes: Int) async throws -> Duration {
            let (lists, time) = try await Self.decodeTime(of: body(megabytes: megabytes))
            #expect(lists["k7"]?.first == "café 7" && lists["_charset_"] == ["iso-8859-1"])
            return time
        }
        let small = try await run(1)
        let growth = try await linearGrowthRatio(limit: 8, medium: { try await run(16) }, large: { try await run(64) })
        print("PartsDecodingLinearTimeTests: a late _charset_: CPU time \(small), \(growth.medium), \(growth.large)")
        #expect(growth.ratio < 8, "a late _charset_: 64 MB took \(growth.ratio)× the CPU time of 16 MB")
    }
}
