import MultipartTestSupport
import StreamingMultipart
import Testing

@Suite struct MultipartBoundaryTests {
    @Test func randomBoundariesAreValidAndDistinct() throws {
        var seen = Set<String>()
        for _ in 0..<1000 {
            let boundary = MultipartBoundary.random()
            #expect(boundary.value.utf8.count <= MultipartBoundary.maximumLength)
            #expect(try MultipartBoundary(boundary.value) == boundary)
            seen.insert(boundary.value)
        }
        #expect(seen.count == 1000)
    }

    @Test func seededBoundaryIsRepeatable() {
        var a = SeededGenerator(seed: 7)
        var b = SeededGenerator(seed: 7)
        #expect(MultipartBoundary.random(using: &a) == MultipartBoundary.random(using: &b))
    }

    @Test(arguments: [
        "x", "----WebKitFormBoundary7MA4YWxkTrZu0gW", "a'()+_,-./:=? b", String(repeating: "z", count: 70),
    ])
    func acceptsRFC2046Boundaries(_ value: String) throws {
        #expect(try MultipartBoundary(value).value == value)
    }

    @Test(arguments: [
        "", String(repeating: "z", count: 71), "ends in space ", "semi;colon", "quote\"", "tab\t",
        "crlf\r\n", "ünïcode",
    ])
    func rejectsInvalidBoundaries(_ value: String) {
        let error = #expect(throws: MultipartError.self) { try MultipartBoundary(value) }
        #expect(error?.code == .invalidBoundary)
        #expect(error?.message.isEmpty == false)
    }

    @Test func contentTypeQuotesBoundariesThatAreNotTokens() throws {
        #expect(
            MultipartBody(boundary: try MultipartBoundary("abc-123")).contentType
                == "multipart/form-data; boundary=abc-123")
        #expect(
            MultipartBody(boundary: try MultipartBoundary("a b:c")).contentType
                == "multipart/form-data; boundary=\"a b:c\"")
    }
}
