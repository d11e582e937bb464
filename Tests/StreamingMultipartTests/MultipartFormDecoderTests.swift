import Foundation
import MultipartTestSupport
import PropertyBased
import Testing

@testable import StreamingMultipart

@Suite struct MultipartFormDecoderTests {
    typealias Listing = MultipartFormEncoderTests.Listing

    /// Spools `body` and hands the form to `read`, removing the spooled files after.
    func withForm<Result>(
        _ body: MultipartBody, limits: MultipartSpooler.Limits = .untimed,
        _ read: (SpooledForm) throws -> Result
    ) async throws -> Result {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let spooler = MultipartSpooler(directory: folder.url, limits: limits)
        let form = try await spooler.spool(chunkStream(try body.bytes(), size: 4096), contentType: body.contentType)
        defer { form.removeFiles() }
        return try read(form)
    }

    /// A form of text fields, in order.
    func form(_ fields: [(String, String)]) throws -> MultipartBody {
        var body = MultipartBody()
        for (name, value) in fields { try body.append(.text(value, name: name)) }
        return body
    }

    @Test(arguments: [MultipartFormKeyStrategy.brackets, .dots])
    func whatTheEncoderWritesDecodesBack(strategy: MultipartFormKeyStrategy) async throws {
        var encoder = MultipartFormEncoder()
        encoder.keyStrategy = strategy
        var decoder = MultipartFormDecoder()
        decoder.keyStrategy = strategy
        let decoded = try await withForm(encoder.encode(MultipartFormEncoderTests.listing)) {
            try decoder.decode(Listing.self, from: $0)
        }
        #expect(decoded == MultipartFormEncoderTests.listing)
    }

    struct Upload: Decodable {
        var caption: String
        var photo: SpooledFile
        var copy: MultipartFile
        var bytes: Data
        var extra: [SpooledFile]
    }

    @Test func filesDecodeAsSpooledFilesMultipartFilesOrData() async throws {
        let photo = Array(repeating: UInt8(0xAB), count: 200_000)
        var body = MultipartBody()
        try body.append(.text("Sunset", name: "caption"))
        try body.append(.data(Data(photo), name: "photo", filename: "sunset.jpg"))
        try body.append(.data(Data(photo), name: "copy", filename: "copy.jpg", contentType: "image/jpeg"))
        try body.append(.data(Data([1, 2, 3]), name: "bytes", filename: "b.bin"))
        try body.append(.data(Data([4]), name: "extra[]", filename: "1.txt"))
        try body.append(.data(Data([5]), name: "extra[]", filename: "2.txt"))
        try await withForm(body) { form in
            let upload = try MultipartFormDecoder().decode(Upload.self, from: form)
            #expect(upload.caption == "Sunset")
            #expect(upload.photo.filename == "sunset.jpg" && upload.photo.byteCount == 200_000)
            #expect(try upload.photo.contents() == photo)
            #expect(upload.copy.filename == "copy.jpg" && upload.copy.contentType == "image/jpeg")
            guard case .file(let url) = upload.copy.source else {
                Issue.record("a file on disk is a file source")
                return
            }
            #expect(try Array(Data(contentsOf: url)) == photo)
            #expect(upload.bytes == Data([1, 2, 3]))
            #expect(try upload.extra.map { try $0.contents() } == [[4], [5]])
        }
    }

    @Test func repeatedNamesBracketsAndIndexesAllMakeLists() async throws {
        struct Lists: Decodable, Equatable {
            var a: [String]
            var b: [String]
            var c: [Int]
            var missing: [String]
        }
        let body = try form([
            ("a", "1"), ("a", "2"), ("b[]", "x"), ("c[2]", "30"), ("c[0]", "10"), ("b[]", "y"), ("c[1]", "20"),
        ])
        let lists = try await withForm(body) { try MultipartFormDecoder().decode(Lists.self, from: $0) }
        #expect(lists == Lists(a: ["1", "2"], b: ["x", "y"], c: [10, 20, 30], missing: []))
    }

    @Test func valuesParseAsTheirTypes() async throws {
        struct Values: Decodable, Equatable {
            var yes: Bool
            var no: Bool
            var checkbox: Bool
            var small: Int8
            var big: UInt64
            var ratio: Float
            var price: Decimal
            var site: URL
            var when: Date
        }
        let body = try form([
            ("yes", "true"), ("no", "0"), ("checkbox", "on"), ("small", "-128"), ("big", "18446744073709551615"),
            ("ratio", "0.25"), ("price", "19.99"), ("site", "https://example.com/a?b=c"),
            ("when", "2026-11-25T13:45:00.250Z"),
        ])
        let values = try await withForm(body) { try MultipartFormDecoder().decode(Values.self, from: $0) }
        #expect(
            values
                == Values(
                    yes: true, no: false, checkbox: true, small: -128, big: .max, ratio: 0.25,
                    price: Decimal(string: "19.99")!, site: URL(string: "https://example.com/a?b=c")!,
                    when: Date(timeIntervalSince1970: 1_795_614_300.25)))
    }

    /// The description and coding path of the `DecodingError` that decoding `T` from `fields` throws.
    func failure<T: Decodable>(
        _ type: T.Type, _ fields: [(String, String)], decoder: MultipartFormDecoder = MultipartFormDecoder()
    ) async throws -> (kind: String, path: String, says: String, cause: MultipartError?) {
        try await withForm(form(fields)) { form in
            do {
                _ = try decoder.decode(type, from: form)
            } catch let error as DecodingError {
                let path = { (context: DecodingError.Context) in
                    context.codingPath.map(\.stringValue).joined(separator: ".")
                }
                switch error {
                case .keyNotFound(let key, let context):
                    return ("keyNotFound", path(context) + "/" + key.stringValue, context.debugDescription, nil)
                case .typeMismatch(_, let context):
                    return ("typeMismatch", path(context), context.debugDescription, nil)
                case .dataCorrupted(let context):
                    return (
                        "dataCorrupted", path(context), context.debugDescription,
                        context.underlyingError as? MultipartError
                    )
                case .valueNotFound(_, let context):
                    return ("valueNotFound", path(context), context.debugDescription, nil)
                @unknown default:
                    return ("unknown", "", "\(error)", nil)
                }
            }
            Issue.record("decoding \(T.self) succeeded")
            return ("", "", "", nil)
        }
    }

    @Test func errorsNameTheFieldAsSentAndTheCodingPath() async throws {
        let missing = try await failure(Listing.Seller.self, [("name", "Ann")])
        #expect(missing.kind == "keyNotFound" && missing.path == "/verified")
        #expect(missing.says.contains("no field \"verified\""))

        struct Nested: Decodable { var items: [Listing.Item] }
        let corrupt = try await failure(Nested.self, [("items[0][id]", "7"), ("items[1][id]", "seven")])
        #expect(corrupt.kind == "dataCorrupted" && corrupt.path == "items.1.id")
        #expect(corrupt.says.contains("\"items[1][id]\" holds \"seven\", not a whole number"))

        let twice = try await failure(Listing.Seller.self, [("name", "Ann"), ("name", "Bob"), ("verified", "1")])
        #expect(twice.kind == "typeMismatch" && twice.path == "name")
        #expect(twice.says.contains("the field \"name\" 2 times"))

        let nested = try await failure(Listing.Seller.self, [("name[first]", "Ann"), ("verified", "1")])
        #expect(nested.kind == "typeMismatch" && nested.says.contains("fields nested under \"name\""))
    }

    @Test func aFileWhereTextIsExpectedSaysSo() async throws {
        var body = MultipartBody()
        try body.append(.data(Data("x".utf8), name: "caption", filename: "c.txt"))
        _ = try await withForm(body) { form in
            #expect {
                try MultipartFormDecoder().decode([String: String].self, from: form)
            } throws: { error in
                guard case DecodingError.typeMismatch(_, let context) = error else { return false }
                return context.debugDescription.contains("\"caption\" is a file (\"c.txt\")")
            }
        }
    }

    @Test func hostileShapesFailCleanlyUnderTheLimits() async throws {
        struct Anything: Decodable { var a: [String]? }
        let index = try await failure(Anything.self, [("a[999999999]", "x")])
        #expect(index.kind == "dataCorrupted" && index.cause?.code == .limitExceeded)
        #expect(index.says.contains("index 999999999"))
        // The same from the parts, where the collector places names as they come.
        let hostile = try form([("a[]", "x"), ("a[999999999]", "y")])
        await #expect {
            let parts = try chunkStream(try hostile.bytes(), size: 64).multipartParts(contentType: hostile.contentType)
            _ = try await MultipartFormDecoder().decode(Anything.self, from: parts)
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error,
                let cause = context.underlyingError as? MultipartError
            else { return false }
            return cause.code == .limitExceeded && cause.partIndex == 1 && cause.message.contains("index 999999999")
        }

        // Ten thousand levels: past the parser's header limit (and the builder's), unless a server raises it.
        let deep = "a" + String(repeating: "[a]", count: 10_000)
        let bytes = Array("--B\r\nContent-Disposition: form-data; name=\"\(deep)\"\r\n\r\nx\r\n--B--\r\n".utf8)
        var longHeaders = MultipartSpooler.Limits.untimed
        longHeaders.parser.maxHeaderBytesPerPart = 1 << 20
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let form = try await MultipartSpooler(directory: folder.url, limits: longHeaders)
            .spool(chunkStream(bytes, size: 4096), contentType: "multipart/form-data; boundary=B")
        #expect {
            try MultipartFormDecoder().decode(Anything.self, from: form)
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return false }
            return (context.underlyingError as? MultipartError)?.code == .limitExceeded
                && context.debugDescription.contains("deeper than 32 levels (maxDepth)")
        }

        var decoder = MultipartFormDecoder()
        decoder.limits.maxListLength = 100
        let many = try await failure(Anything.self, Array(repeating: ("a[]", "x"), count: 101), decoder: decoder)
        #expect(many.cause?.code == .limitExceeded && many.says.contains("more than 100 items"))
        let repeated = try await failure(Anything.self, Array(repeating: ("a", "x"), count: 101), decoder: decoder)
        #expect(repeated.cause?.code == .limitExceeded)
    }

    /// A recursive type, as deep as a name may nest.
    final class Chain: Decodable, Sendable {
        let next: Chain?
        let value: String?

        /// How many levels hang from this one.
        var depth: Int {
            var depth = 0
            var link = next
            while let current = link {
                depth += 1
                link = current.next
            }
            return depth
        }
    }

    /// `maxDepth` set high stops at 512 levels, JSONDecoder's limit, so that a long name cannot nest a recursive
    /// type past the stack; 512 levels decode, from the parts and from a spooled form, on a task's thread.
    @Test func maxDepthStopsAtTheCeilingAndTheCeilingDecodes() async throws {
        var decoder = MultipartFormDecoder()
        decoder.limits.maxDepth = 1_000_000
        #expect(decoder.limits.maxDepth == MultipartFormDecoder.Limits.depthCeiling)
        #expect(MultipartFormDecoder.Limits(maxDepth: 5_000).maxDepth == 512)
        var longHeaders = MultipartSpooler.Limits.untimed
        longHeaders.parser.maxHeaderBytesPerPart = 1 << 20
        for (levels, fits) in [(511, true), (5_000, false)] {
            let name = "next" + String(repeating: "[next]", count: levels - 1) + "[value]"
            let bytes = Array("--B\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\nend\r\n--B--\r\n".utf8)
            let contentType = "multipart/form-data; boundary=B"
            let fromParts = await Task {
                let parts = try chunkStream(bytes, size: 4096).multipartParts(
                    contentType: contentType, limits: longHeaders.parser)
                return try await decoder.decode(Chain.self, from: parts)
            }.result
            let folder = try TemporaryFolder()
            defer { folder.remove() }
            let form = try await MultipartSpooler(directory: folder.url, limits: longHeaders)
                .spool(chunkStream(bytes, size: 4096), contentType: contentType)
            let fromForm = await Task { try decoder.decode(Chain.self, from: form) }.result
            for result in [fromParts, fromForm] {
                switch result {
                case .success(let chain):
                    #expect(fits && chain.depth == levels, "\(levels) levels")
                case .failure(let error):
                    guard case DecodingError.dataCorrupted(let context) = error else {
                        Issue.record("\(levels) levels: \(error)")
                        continue
                    }
                    #expect(!fits && context.debugDescription.contains("deeper than 512 levels"), "\(context)")
                }
            }
        }
    }

    @Test func aTextFormDecodesStraightFromItsParts() async throws {
        struct Settings: Decodable, Equatable {
            var name: String
            var tags: [String]
            var notify: Bool
        }
        let body = try form([("name", "Ann"), ("tags[]", "a"), ("tags[]", "b"), ("notify", "on")])
        let parts = try chunkStream(try body.bytes(), size: 7).multipartParts(contentType: body.contentType)
        let settings = try await MultipartFormDecoder().decode(Settings.self, from: parts)
        #expect(settings == Settings(name: "Ann", tags: ["a", "b"], notify: true))
    }

    /// The decoder guesses each name from the one before (forms repeat their names in one order): names in order,
    /// out of order, in two spellings of one list, and with escapes (which it reads as strings) all land where they
    /// belong, from the parts and from the spooled form alike.
    @Test func namesInAnyOrderLandInTheirLists() async throws {
        let fields = [
            ("a", "1"), ("b", "2"), ("a", "3"), ("b", "4"), ("b", "5"), ("a[]", "6"), ("c\"d", "7"), ("a", "8"),
            ("c\"d", "9"), ("b", "10"), ("a[]", "11"), ("a", "12"),
        ]
        let expected = ["a": ["1", "3", "6", "8", "11", "12"], "b": ["2", "4", "5", "10"], "c\"d": ["7", "9"]]
        let body = try form(fields)
        for size in [3, 64, 4096] {
            let parts = try chunkStream(try body.bytes(), size: size).multipartParts(contentType: body.contentType)
            #expect(try await MultipartFormDecoder().decode([String: [String]].self, from: parts) == expected)
        }
        let spooled = try await withForm(body) { try MultipartFormDecoder().decode([String: [String]].self, from: $0) }
        #expect(spooled == expected)

        // 200 names in a scrambled order: each guess (the name that followed last time) is mostly wrong, and is
        // checked, not trusted.
        let many = (0..<600).map { step in
            let field = step * 7919 % 600
            return ("n\(field % 200)", "\(field)")
        }
        let manyBody = try form(many)
        let manyParts = try chunkStream(try manyBody.bytes(), size: 256).multipartParts(
            contentType: manyBody.contentType)
        #expect(
            try await MultipartFormDecoder().decode([String: [String]].self, from: manyParts)
                == Dictionary(grouping: many, by: \.0).mapValues { $0.map(\.1) })

        // A guess is compared byte for byte with the parser's bytes, and a name with `%` is read as a string: names
        // a byte apart (the last byte, a longer one, a first byte of two), and ones a browser may have escaped, each
        // in its own list.
        let edges = [
            "abcdefgh", "abcdefgi", "abcdefghijklmnop", "abcdefghijklmnoq", "abcdefghijklmnopq",
            "abcdefghijklmnopr", "ábcdefghijklmno", "50%", "50%25", "a b",
        ]
        let edgeFields = (0..<30).map { step in (edges[step * 7 % edges.count], "\(step)") }
        let edgeBody = try form(edgeFields)
        let edgeExpected = Dictionary(grouping: edgeFields, by: \.0).mapValues { $0.map(\.1) }
        for size in [5, 4096] {
            let parts = try chunkStream(try edgeBody.bytes(), size: size).multipartParts(
                contentType: edgeBody.contentType)
            #expect(try await MultipartFormDecoder().decode([String: [String]].self, from: parts) == edgeExpected)
        }
        #expect(
            try await withForm(edgeBody) { try MultipartFormDecoder().decode([String: [String]].self, from: $0) }
                == edgeExpected)

        // A value sent twice under two spellings is still a list, not one value: the error quotes a name as sent.
        struct One: Decodable { var a: String }
        await #expect {
            let parts = try chunkStream(try body.bytes(), size: 64).multipartParts(contentType: body.contentType)
            _ = try await MultipartFormDecoder().decode(One.self, from: parts)
        } throws: { error in
            guard case DecodingError.typeMismatch(_, let context) = error else { return false }
            return context.debugDescription.contains("the field \"a\" 6 times")
        }
    }

    @Test func aTextFieldDecodesAsDataWithTheBytesAsSent() async throws {
        struct Raw: Decodable, Equatable {
            var latin: Data
            var broken: Data
            var text: String
        }
        var body = MultipartBody()
        try body.append(.data(Data([0x63, 0xE9]), name: "latin", contentType: "text/plain; charset=iso-8859-1"))
        try body.append(.data(Data([0x66, 0xFF]), name: "broken"))
        try body.append(.text("été", name: "text"))
        // Chunks of 5 bytes: every value arrives split across chunks.
        let parts = try chunkStream(try body.bytes(), size: 5).multipartParts(contentType: body.contentType)
        let raw = try await MultipartFormDecoder().decode(Raw.self, from: parts)
        #expect(raw == Raw(latin: Data([0x63, 0xE9]), broken: Data([0x66, 0xFF]), text: "été"))
    }

    @Test func partsWithAFileOrPastTheBudgetFailClearly() async throws {
        struct Anything: Decodable { var a: String? }
        var withFile = try form([("a", "1")])
        try withFile.append(.data(Data([1]), name: "f", filename: "f.bin"))
        await #expect {
            let parts = try chunkStream(try withFile.bytes(), size: 64).multipartParts(
                contentType: withFile.contentType)
            _ = try await MultipartFormDecoder().decode(Anything.self, from: parts)
        } throws: { error in
            guard case DecodingError.typeMismatch(_, let context) = error else { return false }
            return context.debugDescription.contains("the field \"f\" is a file (\"f.bin\")")
        }

        let large = try form([("a", String(repeating: "x", count: 600)), ("b", String(repeating: "y", count: 600))])
        await #expect {
            let parts = try chunkStream(try large.bytes(), size: 64).multipartParts(contentType: large.contentType)
            _ = try await MultipartFormDecoder().decode(Anything.self, from: parts, maxMemoryBytes: 2000)
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error,
                let cause = context.underlyingError as? MultipartError
            else { return false }
            return cause.code == .limitExceeded && cause.message.contains("at the field \"b\"")
        }

        // Empty fields cost their names and the overhead: a flood of them is bounded too. One name sent 100 times:
        // its place and its node once, then e × 50 fit and the 51st does not.
        let repeated = try form(Array(repeating: ("e", ""), count: 100))
        let once = 2 * (MultipartFormDecoder.nameOverhead + 2 * 1)
        let overBudget = { (body: MultipartBody, budget: Int) async throws -> MultipartError? in
            do {
                let parts = try chunkStream(try body.bytes(), size: 64).multipartParts(contentType: body.contentType)
                _ = try await MultipartFormDecoder().decode(Anything.self, from: parts, maxMemoryBytes: budget)
                return nil
            } catch DecodingError.dataCorrupted(let context) {
                return context.underlyingError as? MultipartError
            }
        }
        let sameName = try await overBudget(repeated, once + 50 * (1 + MultipartFormDecoder.fieldOverhead))
        #expect(sameName?.code == .limitExceeded && sameName?.partIndex == 50)
        // A new name also pays for its place and the node it adds, with its bytes: e0…e9 fit, e10 does not.
        let empties = try form((0..<100).map { ("e\($0)", "") })
        let perNewName = 2 + MultipartFormDecoder.fieldOverhead + 2 * (MultipartFormDecoder.nameOverhead + 2 * 2)
        let newNames = try await overBudget(empties, 10 * perNewName)
        #expect(newNames?.code == .limitExceeded && newNames?.message.contains("at the field \"e10\"") == true)

        let cut = Array(try large.bytes().dropLast(20))
        await #expect {
            let parts = try chunkStream(cut, size: 64).multipartParts(contentType: large.contentType)
            _ = try await MultipartFormDecoder().decode(Anything.self, from: parts)
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return false }
            return context.underlyingError is MultipartError
        }
    }

    @Test func namesOutsideTheGrammarAreKeysAsSent() async throws {
        let odd = try form([("a[b", "1"), ("a[b]c", "2"), ("[x]", "3"), ("d.e", "4")])
        let flat = try await withForm(odd) { try MultipartFormDecoder().decode([String: String].self, from: $0) }
        #expect(flat == ["a[b": "1", "a[b]c": "2", "[x]": "3", "d.e": "4"])

        let padded = try form([("n[007]", "5"), ("n[7]", "6")])  // 007 is not an index: a key
        let nested = try await withForm(padded) {
            try MultipartFormDecoder().decode([String: [String: String]].self, from: $0)
        }
        #expect(nested == ["n": ["007": "5", "7": "6"]])

        var dots = MultipartFormDecoder()
        dots.keyStrategy = .dots
        let dotted = try await withForm(try form([("d.e", "4")])) {
            try dots.decode([String: [String: String]].self, from: $0)
        }
        #expect(dotted == ["d": ["e": "4"]])
    }
}

/// Encoding, spooling and decoding random values gives them back.
@Suite struct FormRoundTripTests {
    struct Order: Codable, Equatable {
        var id: Int
        var note: String?
        var tags: [String]
        var lines: [Line]
        var matrix: [[Int]]
        var customer: Customer
        var flags: [String: Bool]
        var amount: Double
        var placed: Date
        var receipt: Data?
        struct Line: Codable, Equatable {
            var sku: String
            var quantity: UInt16
            var options: [String]?
        }
        struct Customer: Codable, Equatable {
            var name: String
            var vip: Bool
        }
    }

    /// Any text, control characters and line breaks included: a field's bytes go through as they are.
    static let text = Gen<Character>.oneOf(
        Gen<Character?>.element(of: ["\r", "\n", "\r\n", "\"", "[", "]", ".", "-", " ", "é", "👍🏽"]).map { $0! },
        Gen<Unicode.Scalar>.unicodeScalar(in: "\u{1}"..."\u{D7FF}").map { Character($0) }
    ).string(of: 0...12)
    static let key = Gen<Character>.letterOrNumber.string(of: 1...6)
    /// Lists a form can show: empty lists vanish, so an optional list is nil or has items, and so does a list in a
    /// list.
    static let nonEmptyTexts = text.array(of: 1...3)

    static let order = zip(
        zip(
            Gen<Int>.int(), text.optional, text.array(of: 0...4),
            Gen<Int>.int(in: -99...99).array(of: 1...3).array(of: 0...3)),
        zip(text, text, Gen<UInt16>.uint16(), nonEmptyTexts.optional).map {
            Order.Line(sku: $0, quantity: $2, options: $3)
        }
        .array(of: 0...3),
        zip(text, Gen.bool, zip(key, Gen.bool).dictionary(ofAtMost: 0...3)),
        zip(
            Gen.double(in: -1e9...1e9), Gen<Int64>.int64(in: 0...4_000_000_000),
            Gen<UInt8>.uint8().array(of: 0...40).optional)
    ).map { head, lines, people, rest in
        Order(
            id: head.0, note: head.1, tags: head.2, lines: lines, matrix: head.3,
            customer: .init(name: people.0, vip: people.1), flags: people.2, amount: rest.0,
            placed: Date(timeIntervalSince1970: TimeInterval(rest.1)), receipt: rest.2.map { Data($0) })
    }

    @Test(arguments: [MultipartFormKeyStrategy.brackets, .dots])
    func randomValuesComeBack(strategy: MultipartFormKeyStrategy) async {
        var encoder = MultipartFormEncoder()
        encoder.keyStrategy = strategy
        var decoder = MultipartFormDecoder()
        decoder.keyStrategy = strategy
        await propertyCheck(count: 300, input: Self.order) { order in
            let folder = try TemporaryFolder()
            defer { folder.remove() }
            let body = try encoder.encode(order)
            let form = try await MultipartSpooler(directory: folder.url, limits: .untimed)
                .spool(chunkStream(try body.bytes(), size: 997), contentType: body.contentType)
            defer { form.removeFiles() }
            #expect(try decoder.decode(Order.self, from: form) == order)

            // Straight from the parts, in chunks of 7 bytes (values and names split across them), without the
            // receipt, which is a file.
            var textual = order
            textual.receipt = nil
            let text = try encoder.encode(textual)
            let parts = try chunkStream(try text.bytes(), size: 7).multipartParts(contentType: text.contentType)
            #expect(try await decoder.decode(Order.self, from: parts) == textual)
        }
    }
}
