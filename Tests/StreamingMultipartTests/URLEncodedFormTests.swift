import Foundation
import MultipartTestSupport
import Testing

@testable import StreamingMultipart

/// Forms sent `application/x-www-form-urlencoded`: read by the WHATWG rules at every chunking, into the same
/// `SpooledForm` and the same `Decodable` as a multipart form, under the same limits.
@Suite struct URLEncodedFormTests {
    /// The fields of `body` as (name, value) text, read whole and then at every two-way split.
    func fields(_ body: String, limits: MultipartParser.Limits = .default) throws -> [(String, String)] {
        let bytes = Array(body.utf8)
        var readings: [[[String]]] = []
        for split in [nil] + (0...bytes.count).map(Optional.some) {
            var reader = URLEncodedFormReader(limits: limits)
            var read: [URLEncodedFormReader.Field] = []
            if let split {
                try reader.append(bytes[..<split]) { read.append($0) }
                try reader.append(bytes[split...]) { read.append($0) }
            } else {
                try reader.append(bytes[...]) { read.append($0) }
            }
            try reader.finish { read.append($0) }
            #expect(read.map(\.index) == Array(read.indices))
            readings.append(
                read.map { [String(decoding: $0.name, as: UTF8.self), String(decoding: $0.value, as: UTF8.self)] })
        }
        #expect(readings.allSatisfy { $0 == readings[0] }, "every split reads the same: \(body.debugDescription)")
        return readings[0].map { ($0[0], $0[1]) }
    }

    @Test func theWHATWGRules() throws {
        let cases: [(String, [String])] = [
            ("a=1&b=2", ["a", "1", "b", "2"]),
            ("a=1&&b=2&", ["a", "1", "b", "2"]),  // fields without bytes are skipped
            ("a&=&=x", ["a", "", "", "", "", "x"]),  // no `=`: an empty value; `=` alone: empty name and value
            ("a=b=c", ["a", "b=c"]),  // the first `=` splits
            ("a+b=c+d%20e", ["a b", "c d e"]),
            ("a=%2B%2b+", ["a", "++ "]),  // an escaped `+` is a plus, either case of hex
            ("a=%zz%4%&b=%", ["a", "%zz%4%", "b", "%"]),  // escapes that do not end stay as sent
            ("a=%4=", ["a", "%4="]),
            ("%61%3D=%26", ["a=", "&"]),  // decoded `=` and `&` are text
            ("caf%C3%A9=cr%C3%A8me", ["café", "crème"]),
            ("bad=%FF%C3", ["bad", "\u{FFFD}\u{FFFD}"]),  // bytes that are not UTF-8, once decoded
            ("", []),
            ("&&&", []),
        ]
        for (body, expected) in cases {
            let read = try fields(body).flatMap { [$0.0, $0.1] }
            #expect(read == expected, "\(body.debugDescription)")
        }
    }

    @Test func theReaderBoundsNamesValuesFieldsAndTheBody() throws {
        var limits = MultipartParser.Limits.default
        limits.maxFieldBytes = 8
        limits.maxHeaderBytesPerPart = 4
        limits.maxParts = 3
        #expect(try fields("a=12345678&abcd=1", limits: limits).count == 2)
        // The value's decoded bytes count: nine escapes are 27 bytes sent and 9 kept.
        for (body, limit) in [
            ("a=123456789", "maxFieldBytes"), ("a=" + String(repeating: "%41", count: 9), "maxFieldBytes"),
            ("abcde=1", "maxHeaderBytesPerPart"), ("a&b&c&d", "maxParts"),
        ] {
            let error = #expect(throws: MultipartError.self) { _ = try fields(body, limits: limits) }
            #expect(error?.code == .limitExceeded && error?.message.contains(limit) == true, "\(body): \(error!)")
        }
        var reader = URLEncodedFormReader(limits: .default, maxBodyBytes: 10)
        try reader.append(Array("&&&&&&&&&&".utf8)[...]) { _ in Issue.record("a field") }
        let error = #expect(throws: MultipartError.self) {
            try reader.append(Array("&".utf8)[...]) { _ in Issue.record("a field") }
        }
        #expect(error?.code == .limitExceeded)
    }

    /// Random bodies made of the bytes the rules turn on, raw UTF-8 among them.
    static let randomBodies: [String] = {
        var random = SeededGenerator(seed: 32)
        let pieces = [
            "a", "b", "=", "&", "+", "%", "2", "B", "f", "F", "z", "%41", "%3D", "%26", "%C3%A9", "é", " ", "%E2%82",
        ]
        return (0..<400).map { _ in
            (0..<Int(random.next() % 24)).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined()
        }
    }()

    /// What a peer reads of each body, as lists of [name, value]: `script` reads a JSON list of bodies on standard
    /// input and prints the readings as JSON.
    func peerReadings(_ executable: String, _ arguments: [String], _ bodies: [String]) throws -> [[[String]]] {
        let result = try runProgram(executable, arguments, input: [UInt8](try JSONEncoder().encode(bodies)))
        try #require(result.status == 0, "\(result.stderr)")
        let readings = try JSONDecoder().decode([[[String]]].self, from: Data(result.stdout))
        try #require(readings.count == bodies.count)
        return readings
    }

    /// Python's `urllib.parse.parse_qsl` (blank values kept, UTF-8 with replacement) reads what this reader reads.
    @Test(.enabled(if: executableOnPath("python3") != nil, "needs python3"))
    func pythonsParseQslReadsTheSame() throws {
        let script = """
            import json, sys
            from urllib.parse import parse_qsl
            bodies = json.load(sys.stdin)
            print(json.dumps([parse_qsl(b, keep_blank_values=True, encoding="utf-8", errors="replace") for b in bodies]))
            """
        let theirs = try peerReadings(executableOnPath("python3")!, ["-c", script], Self.randomBodies)
        for (body, expected) in zip(Self.randomBodies, theirs) {
            #expect(try fields(body).map { [$0.0, $0.1] } == expected, "\(body.debugDescription)")
        }
    }

    /// Node's `URLSearchParams` reads the same of the bodies without raw non-ASCII text. (Of a field that holds both
    /// an escape and a raw `é`, Node 20 takes the `é` as the one byte 0xE9 and reads U+FFFD, where the URL standard
    /// encodes the text as UTF-8 first, as Python and this reader do; browsers never send raw non-ASCII.)
    @Test(.enabled(if: executableOnPath("node") != nil, "needs node (.ci/run installs nodejs)"))
    func nodesURLSearchParamsReadsTheSame() throws {
        let script = """
            const bodies = JSON.parse(require("fs").readFileSync(0, "utf8"));
            console.log(JSON.stringify(bodies.map(body => [...new URLSearchParams(body)])));
            """
        let ascii = Self.randomBodies.filter { $0.utf8.allSatisfy { $0 < 0x80 } }
        #expect(ascii.count > 100)
        let theirs = try peerReadings(executableOnPath("node")!, ["-e", script], ascii)
        for (body, expected) in zip(ascii, theirs) {
            #expect(try fields(body).map { [$0.0, $0.1] } == expected, "\(body.debugDescription)")
        }
    }

    struct Signup: Decodable, Equatable {
        struct Address: Decodable, Equatable {
            var city: String
        }

        var name: String
        var age: Int
        var tags: [String]
        var address: Address
        var newsletter: Bool
    }

    static let signup = Signup(
        name: "Zoë Ann", age: 41, tags: ["a&b", "c=d"], address: .init(city: "Köln"), newsletter: true)

    /// The same signup sent both ways.
    static func bodies() throws -> [(contentType: String, bytes: [UInt8])] {
        var multipart = MultipartBody()
        for (name, value) in [
            ("name", "Zoë Ann"), ("age", "41"), ("tags[]", "a&b"), ("tags[]", "c=d"), ("address[city]", "Köln"),
            ("newsletter", "on"),
        ] {
            try multipart.append(.text(value, name: name))
        }
        let urlencoded =
            "name=Zo%C3%AB+Ann&age=41&tags%5B%5D=a%26b&tags%5B%5D=c%3Dd&address%5Bcity%5D=K%C3%B6ln&newsletter=on"
        return [
            (multipart.contentType, try multipart.bytes()),
            ("application/x-www-form-urlencoded; charset=UTF-8", Array(urlencoded.utf8)),
        ]
    }

    @Test(arguments: [1, 7, 4096])
    func bothEncodingsDecodeIntoTheSameValue(chunk: Int) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let spooler = MultipartSpooler(directory: folder.url, limits: .untimed)
        for (contentType, bytes) in try Self.bodies() {
            let signup = try await spooler.withSpooledForm(chunkStream(bytes, size: chunk), contentType: contentType) {
                try MultipartFormDecoder().decode(Signup.self, from: $0)
            }
            #expect(signup == Self.signup, "\(contentType)")
        }
        // The spooler's watchdog reads an urlencoded body too, on its child task.
        let timed = MultipartSpooler(directory: folder.url)
        let form = try await timed.spool(
            chunkStream(try Self.bodies()[1].bytes, size: 10), contentType: "application/x-www-form-urlencoded")
        #expect(form.values(of: "tags[]") == ["a&b", "c=d"] && form.files.isEmpty)
        #expect(form.fields.map(\.partIndex) == Array(0..<6) && form.fields.allSatisfy { $0.contentType == nil })
    }

    @Test func theFormsCharsetIsReadAsForAMultipartForm() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let form = try await MultipartSpooler(directory: folder.url, limits: .untimed).spool(
            chunkStream(Array("_charset_=iso-8859-1&city=K%F6ln".utf8), size: 5),
            contentType: "application/x-www-form-urlencoded")
        #expect(form.charset == "iso-8859-1" && form.value(of: "city") == "Köln")
        #expect(form.fields.last?.bytes == [0x4B, 0xF6, 0x6C, 0x6E])
    }

    @Test func theSpoolersLimitsApply() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var limits = MultipartSpooler.Limits.untimed
        limits.maxMemoryBytes = 4096
        let spooler = MultipartSpooler(directory: folder.url, limits: limits)
        func failure(_ body: [UInt8], encoding: String? = nil) async -> MultipartError? {
            await #expect(throws: MultipartError.self) {
                _ = try await spooler.spool(
                    chunkStream(body, size: 1000), contentType: "application/x-www-form-urlencoded",
                    contentEncoding: encoding)
            }
        }
        // Many small fields fill the memory budget by their per-field cost, as multipart fields do.
        let many = await failure(Array(String(repeating: "a=1&", count: 100).utf8))
        #expect(many?.code == .limitExceeded && many?.message.contains("maxMemoryBytes") == true)
        // A flood of separators holds nothing, and still stops at four times the memory budget.
        #expect(spooler.maxURLEncodedBodyBytes == 16384)
        let flood = await failure([UInt8](repeating: UInt8(ascii: "&"), count: 20000))
        #expect(flood?.code == .limitExceeded && flood?.message.contains("16384") == true)
        let gzip = await failure(Array("a=1".utf8), encoding: "gzip")
        #expect(gzip?.code == .unsupportedContentEncoding && gzip?.httpStatus == 415)
        #expect(try folder.contents() == [])
    }
}
