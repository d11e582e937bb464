import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// Several files of one field nested in a `multipart/mixed` part, as `curl -F 'f=@a,b'` sends them (RFC 2388 §4.2,
/// deprecated by RFC 7578 §4.3): the parser reports the part with its boundary, and the parts, the spooler and the
/// decoder read the files inside as files of the outer field.
@Suite struct MixedPartTests {
    static let outer = "------------------------647953d6c996a958"
    static let inner = "------------------------7821b02280b9f0de"
    static let contentType = "multipart/form-data; boundary=\(outer)"

    /// A form as curl 7.88 sends `-F 'f=@a.txt,b.txt' -F g=text`, with the two files' contents given.
    static func curlBody(_ first: [UInt8], _ second: [UInt8], extraFile: Bool = false) -> [UInt8] {
        var body = Array(
            ("--\(outer)\r\nContent-Disposition: form-data; name=\"f\"\r\n"
                + "Content-Type: multipart/mixed; boundary=\(inner)\r\n\r\n"
                + "--\(inner)\r\nContent-Disposition: attachment; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\n")
                .utf8)
        body += first
        body += Array(
            "\r\n--\(inner)\r\nContent-Disposition: attachment; filename=\"b.txt\"\r\nContent-Type: text/plain\r\n\r\n"
                .utf8)
        body += second
        if extraFile {
            body += Array("\r\n--\(inner)\r\nContent-Disposition: file; filename=\"c.txt\"\r\n\r\nc".utf8)
        }
        body += Array(
            ("\r\n--\(inner)--\r\n--\(outer)\r\nContent-Disposition: form-data; name=\"g\"\r\n\r\ntext\r\n"
                + "--\(outer)--\r\n").utf8)
        return body
    }

    @Test func thePartsReportTheMixedPartAndReadTheFilesInside() async throws {
        let body = Self.curlBody(Array("hello a".utf8), Array("hello b".utf8))
        var seen: [String] = []
        for try await part in try chunkStream(body, size: 7).multipartParts(contentType: Self.contentType) {
            if part.head.mixedBoundary != nil {
                #expect(part.head.mixedBoundary == (try MultipartBoundary(Self.inner)))
                for try await file in try part.mixedParts() {
                    var bytes: [UInt8] = []
                    for try await chunk in file.body { bytes += chunk }
                    #expect(file.head.isFile)
                    seen.append(
                        "\(file.head.name) \(file.head.filename ?? "-") \(String(decoding: bytes, as: UTF8.self))")
                }
            } else {
                #expect(part.head.mixedBoundary == nil)
                seen.append("\(part.head.name) \(try await part.body.collect(upTo: 100).count)")
            }
        }
        #expect(seen == ["f a.txt hello a", "f b.txt hello b", "g 4"])
    }

    /// Two 700 KB files in one mixed part pass maxFieldBytes (1 MiB) together: the part is bounded as a file.
    @Test func theSpoolerSpoolsTheFilesAsFilesOfTheField() async throws {
        let first = [UInt8](repeating: 0x61, count: 700_000)
        let second = [UInt8](repeating: 0x62, count: 700_000)
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let form = try await MultipartSpooler(directory: folder.url, limits: .untimed).spool(
            chunkStream(Self.curlBody(first, second), size: 65536), contentType: Self.contentType)
        defer { form.removeFiles() }
        #expect(form.files(named: "f").map(\.filename) == ["a.txt", "b.txt"])
        #expect(form.files.map(\.partIndex) == [0, 0], "the files sit where the mixed part does")
        #expect(try form.files[0].contents() == first)
        #expect(try form.files[1].contents() == second)
        #expect(form.files[0].contentType == "text/plain")
        #expect(form.fields.map(\.name) == ["g"])

        struct Upload: Decodable {
            var f: [SpooledFile]
            var g: String
        }
        let upload = try MultipartFormDecoder().decode(Upload.self, from: form)
        #expect(upload.f.map(\.filename) == ["a.txt", "b.txt"] && upload.g == "text")
    }

    /// The files inside count as files (maxFiles), and the mixed part is bounded by maxFileBytes, which bounds each
    /// file inside too.
    @Test func theFilesInsideCountAgainstTheLimits() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        func spool(_ body: [UInt8], _ limits: MultipartSpooler.Limits) async throws -> MultipartError? {
            do {
                let form = try await MultipartSpooler(directory: folder.url, limits: limits).spool(
                    chunkStream(body, size: 1000), contentType: Self.contentType)
                form.removeFiles()
                return nil
            } catch let error as MultipartError {
                return error
            }
        }
        var maxFiles = MultipartSpooler.Limits.untimed
        maxFiles.maxFiles = 2
        let three = try #require(await spool(Self.curlBody([1], [2], extraFile: true), maxFiles))
        #expect(three.code == .limitExceeded && three.message.contains("maxFiles"), "\(three)")

        var maxFileBytes = MultipartSpooler.Limits.untimed
        maxFileBytes.parser.maxFileBytes = 1000
        let large = try #require(
            await spool(Self.curlBody([1], [UInt8](repeating: 2, count: 900)), maxFileBytes), "the whole part passes")
        #expect(large.code == .limitExceeded && large.message.contains("maxFileBytes"), "\(large)")
        #expect(try folder.contents() == [], "nothing left in the spool")
    }

    @Test func aBrokenNestedBodyNamesTheOuterPart() async throws {
        var body = Self.curlBody([1], [2])
        let close = Array("--\(Self.inner)--".utf8)
        let at = try #require(body.firstRange(of: close))
        body.replaceSubrange(at, with: Array("--\(Self.inner)X".utf8))  // no close delimiter inside
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        await #expect {
            _ = try await MultipartSpooler(directory: folder.url, limits: .untimed).spool(
                chunkStream(body, size: 100), contentType: Self.contentType)
        } throws: { error in
            guard let error = error as? MultipartError else { return false }
            return error.partIndex == 0 && error.message.hasPrefix("inside part 1 (\"f\", multipart/mixed): ")
        }
        #expect(try folder.contents() == [])
    }

    @Test func decodingStraightFromThePartsRefusesTheFiles() async throws {
        struct Text: Decodable { var g: String }
        let parts = try chunkStream(Self.curlBody([1], [2]), size: 64).multipartParts(contentType: Self.contentType)
        await #expect {
            _ = try await MultipartFormDecoder().decode(Text.self, from: parts)
        } throws: { error in
            guard case DecodingError.typeMismatch(_, let context) = error else { return false }
            return context.debugDescription.contains("multipart/mixed")
        }
    }

    @Test func aPartThatIsNotMixedHasNoFilesInside() async throws {
        let body = Self.curlBody([1], [2])
        var iterator = try chunkStream(body, size: 64).multipartParts(contentType: Self.contentType)
            .makeAsyncIterator()
        _ = try await iterator.next()
        let second = try #require(try await iterator.next())
        #expect(second.head.name == "g" && second.head.mixedBoundary == nil)
        #expect(throws: MultipartError.self) { _ = try second.mixedParts() }
    }
}
