import Foundation
import MultipartTestSupport
import PropertyBased
import StreamingMultipart
import Testing

/// `Content-Disposition` both ways: what browsers, Go and curl send, and what the builder writes reads back.
@Suite struct ContentDispositionTests {
    // MARK: Backslashes are literal, as browsers send them

    @Test func browsersSendBackslashesRaw() throws {
        // Firefox and Chrome send the name `C:\dir\\x "y"` like this: only `"`, CR and LF are escaped.
        let parsed = try ContentDisposition(parsing: #"form-data; name="C:\dir\\x %22y%22""#)
        #expect(parsed.name == #"C:\dir\\x "y""#)
        #expect(try ContentDisposition(parsing: #"form-data; name="a\""#).name == #"a\"#)
        let both = try ContentDisposition(parsing: #"form-data; name="up\"; filename="report.pdf""#)
        #expect(both.name == #"up\"#)
        #expect(both.filename == "report.pdf")
    }

    @Test func aTrailingBackslashCannotInjectAFilename() throws {
        // `-F 'up\=@file;filename=...'`: the name ends in a backslash. The parser must not read `\"` as an escaped
        // quote and take the attacker's text after it as part of the name, or the next quoted string as the filename.
        var body = MultipartBody(boundary: try MultipartBoundary("xyz"))
        try body.append(.data(Data("x".utf8), name: #"up\"#, filename: "real.txt"))
        try body.append(.text("v", name: #"a\"; filename="evil.sh"#))
        let parts = try #require(parseEveryChunking(try body.bytes(), boundary: "xyz").parts)
        #expect(parts.map(\.name) == [#"up\"#, #"a\"; filename="evil.sh"#])
        #expect(parts.map(\.head.filename) == ["real.txt", nil])
    }

    @Test func backslashEscapesFromGoAndCurlAreReadWhereTheBrowserReadingFails() throws {
        // Go's CreateFormFile and `curl --form-escape` escape `"` and `\` with a backslash. Read with backslashes
        // literal these headers do not parse, so they are read again as RFC 9110 quoted strings.
        let go = try ContentDisposition(parsing: #"form-data; name="file"; filename="my \"best\" photo.jpg""#)
        #expect(go.filename == #"my "best" photo.jpg"#)
        let curl = try ContentDisposition(parsing: #"form-data; name="a\"b\\c"; filename="x\"; name=\"y""#)
        #expect(curl.name == #"a"b\c"#)
        #expect(curl.filename == #"x"; name="y"#)
        // Where both readings parse, the browsers' wins: a doubled backslash stays doubled.
        #expect(try ContentDisposition(parsing: #"form-data; name="a\\b""#).name == #"a\\b"#)
    }

    @Test func headersThatParseNeitherWayAreRefused() {
        for value in [#"form-data; name="a\"b"#, #"form-data; name="a" b"#, #"form-data; name="a\"; x"#] {
            let error = #expect(throws: MultipartError.self) { try ContentDisposition(parsing: value) }
            #expect(error?.code == .invalidHeader, "\(value)")
        }
    }

    // MARK: What the builder writes reads back

    /// Characters that matter to quoting and escaping.
    static let special: [Character] = [
        "\\", "\"", "%", ";", "=", " ", "\t", "2", "D", "0", "d", "A", "a", "5", "'", "*", "\r", "\n", "\r\n", "é",
        "✓", "👍🏽",
    ]

    /// Mostly the special characters, sometimes any Unicode scalar but NUL (which no header may hold).
    static let nameCharacter = Gen<Character>.oneOf(
        Gen<Character?>.element(of: special).map { $0! },
        Gen<Character?>.element(of: special).map { $0! },
        Gen<Unicode.Scalar>.unicodeScalar(in: "\u{1}"..."\u{D7FF}").map { Character($0) },
        Gen<Unicode.Scalar>.unicodeScalar(in: "\u{E000}"..."\u{10FFFF}").map { Character($0) })

    @Test func everyNameAndFilenameTheBuilderWritesReadsBack() async throws {
        await propertyCheck(
            count: 2000, input: Self.nameCharacter.string(of: 0...12), Self.nameCharacter.string(of: 0...12)
        ) {
            name, filename in
            let header = ContentDisposition(name: name, filename: filename).headerValue
            let parsed = try? ContentDisposition(parsing: header)
            #expect(parsed?.name == Self.readBack(name), "\(header.debugDescription)")
            #expect(parsed?.filename == Self.readBack(filename), "\(header.debugDescription)")
        }
    }

    /// What a name or filename reads back as: itself, but for `%22`, `%0D` and `%0A` written as text, which the
    /// WHATWG encoding sends as they are and every reader of it unescapes.
    static func readBack(_ text: String) -> String {
        text.replacingOccurrences(of: "%22", with: "\"")
            .replacingOccurrences(of: "%0[Dd]", with: "\r", options: .regularExpression)
            .replacingOccurrences(of: "%0[Aa]", with: "\n", options: .regularExpression)
    }

    @Test func percentSignsGoOutAsTheyAreAsBrowsersSendThem() throws {
        // Chromium and Firefox escape only `"`, CR and LF: `%` and what follows it are sent as they are.
        for (name, header) in [
            ("100% \"x\".txt", #"form-data; name="100% %22x%22.txt""#), ("%25", #"form-data; name="%25""#),
            ("a%2522b", #"form-data; name="a%2522b""#), ("50% off", #"form-data; name="50% off""#),
        ] {
            #expect(ContentDisposition(name: name).headerValue == header)
        }
        // Only `%22`, `%0D` and `%0A` are read as escapes; `%25` and any other `%` stay.
        for (header, name) in [
            (#"form-data; name="a%2522b""#, "a%2522b"), (#"form-data; name="%25%32%32""#, "%25%32%32"),
            (#"form-data; name="a%22b%0d%0A""#, "a\"b\r\n"), (#"form-data; name="%%22""#, "%\""),
            (#"form-data; name="50%""#, "50%"), (#"form-data; name="%2""#, "%2"),
        ] {
            #expect(try ContentDisposition(parsing: header).name == name, "\(header)")
        }
        // So a name that holds `%22` as text reads back as `"`: the standard cannot tell them apart.
        #expect(try ContentDisposition(parsing: ContentDisposition(name: "100%22").headerValue).name == "100\"")
    }

    // MARK: Equality and parameters follow the fields

    @Test func aParsedDispositionEqualsTheSameBuiltOne() throws {
        #expect(try ContentDisposition(parsing: #"form-data; name="a""#) == ContentDisposition(name: "a"))
        #expect(try ContentDisposition(parsing: #"Form-Data; NAME=a"#) == ContentDisposition(name: "a"))
        #expect(try ContentDisposition(parsing: #"form-data; name="a""#) != ContentDisposition(name: "b"))
    }

    @Test func parametersFollowTheFields() throws {
        var disposition = try ContentDisposition(parsing: #"form-data; name="a"; size=12"#)
        #expect(disposition.parameters.map(\.name) == ["name", "size"])
        disposition.name = "b"
        disposition.filename = "f.txt"
        #expect(
            disposition.parameters == [
                .init(name: "name", value: "b"), .init(name: "filename", value: "f.txt"),
                .init(name: "size", value: "12"),
            ])
        #expect(disposition.headerValue == #"form-data; name="b"; filename="f.txt"; size="12""#)
    }
}
