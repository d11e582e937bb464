import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

@Suite struct MultipartHeadersTests {
    /// Every byte in a received header name: accepted exactly when it is an RFC 9110 §5.6.2 `tchar`.
    @Test func receivedHeaderNamesAreExactlyRFC9110Tokens() throws {
        let tchar = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        for byte in UInt8.min...UInt8.max where byte != 0x0A && byte != 0x0D && byte != UInt8(ascii: ":") {
            let body =
                Array("--b\r\nContent-Disposition: form-data; name=\"a\"\r\nX".utf8) + [byte]
                + Array("Y: v\r\n\r\nvalue\r\n--b--\r\n".utf8)
            var parser = try MultipartParser(boundary: MultipartBoundary("b"))
            var accepted = true
            do {
                try parser.append(body)
                while try parser.next() != nil {}
                try parser.finish()
            } catch {
                accepted = false
            }
            #expect(accepted == tchar.contains(byte), "byte \(byte)")
        }
    }

    @Test func keepsOrderAndComparesNamesCaseInsensitively() {
        var headers: MultipartHeaders = ["Content-Disposition": "form-data", "X-A": "1"]
        headers.append("x-a", "2")
        #expect(headers.map(\.name.rawName) == ["Content-Disposition", "X-A", "x-a"])
        #expect(headers["CONTENT-disposition"] == "form-data")
        #expect(headers.values(for: "X-a") == ["1", "2"])
        headers["X-A"] = "3"
        #expect(headers.values(for: "x-a") == ["3"])
        #expect(headers.count == 2)
        headers["x-a"] = nil
        #expect(headers.count == 1)
        headers["New"] = "v"
        #expect(headers.map(\.name.rawName) == ["Content-Disposition", "New"])
    }

    @Test(arguments: ["a\rb", "a\nb", "a\r\nX-Injected: yes", "nul\u{0}"])
    func refusesValuesWithCRLFOrNUL(_ value: String) {
        var body = MultipartBody()
        let headers: MultipartHeaders = ["Content-Disposition": "form-data; name=\"a\"", "X-Custom": value]
        let error = #expect(throws: MultipartError.self) {
            try body.append(MultipartPart(headers: headers, content: .text("x")))
        }
        #expect(error?.code == .invalidHeader)
        #expect(error?.message.contains("X-Custom") == true)
        #expect(body.parts.isEmpty)
    }

    @Test func refusesContentTypeWithCRLF() {
        var body = MultipartBody()
        let error = #expect(throws: MultipartError.self) {
            try body.append(.data(Data("x".utf8), name: "f", filename: "f.txt", contentType: "text/plain\r\nX-Evil: 1"))
        }
        #expect(error?.code == .invalidHeader)
    }

    @Test(arguments: ["", "Bad Name", "Colon:", "Ünï"])
    func refusesNamesThatAreNotTokens(_ name: String) {
        var body = MultipartBody()
        let headers = MultipartHeaders([.init(name: .init(name), value: "v")])
        let error = #expect(throws: MultipartError.self) {
            try body.append(MultipartPart(headers: headers, content: .text("x")))
        }
        #expect(error?.code == .invalidHeader)
    }

    @Test func escapesNamesAndFilenamesTheWHATWGWay() {
        #expect(ContentDisposition(name: "a\"b\r\nc").headerValue == #"form-data; name="a%22b%0D%0Ac""#)
        #expect(
            ContentDisposition(name: "f", filename: "x\"y.txt").headerValue
                == #"form-data; name="f"; filename="x%22y.txt""#)
        #expect(ContentDisposition.escape("naïve \\ ✓") == "naïve \\ ✓")
    }
}
