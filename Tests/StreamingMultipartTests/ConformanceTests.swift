import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// Every case of the PyPI `multipart-form-data-conformance` suite (installed by `.ci/run`), each fed whole, one
/// byte at a time and split at every position. Cases tagged `lenient` (or with `strict_line_endings: false`) run in
/// lenient mode against `lenient_expected` when given.
@Suite struct ConformanceTests {
    struct Case {
        var id: String
        var folder: URL
        var spec: [String: Any]
        var contentType: String
        var body: [UInt8]

        var tags: [String] { spec["tags"] as? [String] ?? [] }
        var isLenient: Bool {
            tags.contains("lenient")
                || (spec["parser_options"] as? [String: Any])?["strict_line_endings"] as? Bool == false
        }
        var expected: [String: Any] {
            (isLenient ? spec["lenient_expected"] as? [String: Any] : nil) ?? spec["expected"] as! [String: Any]
        }
    }

    /// The suite's cases, from the installed package.
    static func cases() throws -> [Case] {
        let python = try #require(Peers.conformance)
        let located = try runProgram(
            python, ["-c", "import multipart_form_data_conformance as m; print(m.get_tests_dir())"])
        let root = URL(fileURLWithPath: located.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines))
        var cases: [Case] = []
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            guard url.lastPathComponent == "test.json" else { continue }
            let folder = url.deletingLastPathComponent()
            let spec = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
            let headers =
                try JSONSerialization.jsonObject(
                    with: Data(contentsOf: folder.appendingPathComponent("headers.json"))) as! [String: String]
            let input = spec["input"] as? [String: Any]
            var body = try Data(
                contentsOf: folder.appendingPathComponent(input?["body_file"] as? String ?? "input.raw"))
            if input?["body_encoding"] as? String == "base64" {
                body = Data(base64Encoded: body, options: .ignoreUnknownCharacters)!
            }
            let contentType = headers.first { $0.key.lowercased() == "content-type" }!.value
            cases.append(
                Case(
                    id: spec["id"] as! String, folder: folder, spec: spec, contentType: contentType, body: [UInt8](body)
                ))
        }
        return cases.sorted { $0.id < $1.id }
    }

    /// The suite's error types and the codes this parser gives for them.
    static let errorCodes: [String: Set<MultipartError.Code>] = [
        "missing_terminator": [.missingCloseDelimiter],
        "boundary_mismatch": [.boundaryNotFound],
        "truncated": [.truncated],
        "missing_content_disposition": [.missingContentDisposition],
        "missing_name": [.missingName, .invalidHeader],
        "invalid_header": [.invalidHeader],
    ]

    @Test(
        .enabled(
            if: Peers.conformance != nil, "needs python3 with multipart-form-data-conformance (.ci/run installs it)"))
    func everyCase() throws {
        let cases = try Self.cases()
        #expect(cases.count >= 58, "the suite shrank: \(cases.count) cases")
        var lenientCount = 0
        for testCase in cases {
            let mode: MultipartParser.Mode = testCase.isLenient ? .lenient : .strict
            if mode == .lenient { lenientCount += 1 }
            let outcome: ParseOutcome
            do {
                let boundary = try MultipartBoundary(contentType: testCase.contentType)
                outcome = parseEveryChunking(testCase.body, boundary: boundary.value, mode: mode)
            } catch let error as MultipartError {
                outcome = .failed(error.code, offset: nil)
            }
            check(outcome, against: testCase.expected, case: testCase)
        }
        print(
            "ConformanceTests: ran \(cases.count) conformance cases (\(lenientCount) in lenient mode), "
                + "each whole, byte by byte and split at every position")
    }

    /// Duplicate `Content-Disposition` (case 208): the suite's note allows rejecting it, which strict mode does;
    /// lenient mode takes the last one, as the suite's reference parser does.
    @Test(
        .enabled(
            if: Peers.conformance != nil, "needs python3 with multipart-form-data-conformance (.ci/run installs it)"))
    func duplicateHeadersAreRejectedStrictlyAndResolvedLeniently() throws {
        let testCase = try #require(try Self.cases().first { $0.id == "208-duplicate-headers" })
        #expect((testCase.spec["notes"] as? String)?.contains("reject duplicates are also correct") == true)
        let boundary = try MultipartBoundary(contentType: testCase.contentType).value
        #expect(parseEveryChunking(testCase.body, boundary: boundary, mode: .strict).error == .duplicateHeader)
        let lenient = parseEveryChunking(testCase.body, boundary: boundary, mode: .lenient)
        check(lenient, against: testCase.spec["expected"] as! [String: Any], case: testCase)
    }

    /// The one case where this parser deliberately reads a value differently from the suite. Case 026 sends
    /// `filename="folder\\file.txt"` and expects one backslash (RFC 9110 quoted-pairs). Browsers never escape a
    /// backslash (WHATWG HTML), so a file named `folder\\file.txt` arrives exactly so, and reading `\\` as an escape
    /// also reads `name="a\"` as an unterminated string that swallows the next parameter (Werkzeug takes the field
    /// name `a"; filename=` from it). Python's `multipart` 2.0.1 reads both as this parser does. See
    /// `ContentDisposition(parsing:)`.
    static let browserReadFilenames = ["026-filename-with-backslash": #"folder\\file.txt"#]

    func check(_ outcome: ParseOutcome, against expected: [String: Any], case testCase: Case) {
        let id = testCase.id
        guard expected["valid"] as! Bool else {
            let errorType = expected["error_type"] as? String ?? "?"
            guard let code = outcome.error else {
                Issue.record("\(id): parsed, but the suite expects rejection (\(errorType))")
                return
            }
            #expect(Self.errorCodes[errorType]?.contains(code) ?? true, "\(id): \(errorType) came out as \(code)")
            return
        }
        if id == "208-duplicate-headers", outcome.error == .duplicateHeader { return }  // allowed by the case's note
        guard let parts = outcome.parts else {
            Issue.record("\(id): rejected with \(outcome), but the suite expects it to parse")
            return
        }
        let expectedParts = expected["parts"] as? [[String: Any]] ?? []
        #expect(parts.count == expectedParts.count, "\(id): \(parts.count) parts, expected \(expectedParts.count)")
        for (part, want) in zip(parts, expectedParts) {
            #expect(part.head.name == want["name"] as? String, "\(id): name")
            if let filename = Self.browserReadFilenames[id] {
                #expect(part.head.filename == filename, "\(id): filename, read as browsers mean it")
            } else {
                #expect(part.head.filename == want["filename"] as? String, "\(id): filename")
            }
            if want.keys.contains("filename_star") {
                #expect(part.head.filenameStar == want["filename_star"] as? String, "\(id): filename*")
            }
            #expect(part.head.contentType == want["content_type"] as? String, "\(id): content type")
            if let size = want["body_size"] as? Int { #expect(part.body.count == size, "\(id): body size") }
            if let text = want["body_text"] as? String { #expect(part.body == Array(text.utf8), "\(id): body text") }
            if let base64 = want["body_base64"] as? String {
                #expect(part.body == [UInt8](Data(base64Encoded: base64)!), "\(id): body bytes")
            }
            if let digest = want["body_sha256"] as? String {
                #expect(sha256Hex(part.body) == digest, "\(id): body SHA-256")
            }
            if let charset = want["charset"] as? String {
                let parameters = part.head.contentType.flatMap { try? ContentType(parsing: $0).parameters }
                #expect(parameters?["charset"]?.lowercased() == charset, "\(id): charset")
            }
            if let headers = want["headers"] as? [String: String] {
                for (name, value) in headers {
                    #expect(part.head.headers[.init(name)] == value, "\(id): header \(name)")
                }
            }
        }
    }
}
