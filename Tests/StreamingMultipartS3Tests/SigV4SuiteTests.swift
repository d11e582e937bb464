import Foundation
import MultipartTestSupport
import Testing

@testable import StreamingMultipartS3

/// AWS's Signature Version 4 test suite, from one pinned version of botocore's source distribution
/// (Peers/aws4_testsuite.py), fetched at test time (never committed): each case's request signed here must give the
/// suite's canonical request, string to sign and `Authorization` header.
@Suite struct SigV4SuiteTests {
    /// The suite's folder, fetched once into `.build/peers`, or nil where pip cannot fetch it.
    static let suite: URL? = {
        guard let python = executableOnPath("python3") else { return nil }
        let cache = Repository.root.appendingPathComponent(".build/peers").path
        guard let result = try? runProgram(python, [Repository.peerScript("aws4_testsuite.py"), cache]),
            result.status == 0
        else { return nil }
        let path = String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return URL(fileURLWithPath: path)
    }()

    /// The suite's cases: every folder holding a `.req`, by its path under the suite.
    static func cases() -> [String] {
        guard let suite, let walk = FileManager.default.enumerator(atPath: suite.path) else { return [] }
        return walk.compactMap { $0 as? String }.filter { $0.hasSuffix(".req") }
            .map { ($0 as NSString).deletingLastPathComponent }.sorted()
    }

    static let credentials = S3Credentials(
        accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    /// 2015-08-30T12:36:00Z, the suite's time.
    static let date = Date(timeIntervalSince1970: 1_440_938_160)

    @Test(
        .enabled(
            if: suite != nil,
            "needs python3 and pip to fetch botocore's source distribution from PyPI (AWS's Signature Version 4 suite)"
        ))
    func everyCaseOfTheSuiteSignsAsAWSSays() throws {
        let cases = Self.cases()
        #expect(cases.count >= 30, "the suite's cases: \(cases)")
        for name in cases {
            let folder = Self.suite!.appendingPathComponent(name)
            let base = (name as NSString).lastPathComponent
            func read(_ ext: String) throws -> String {
                try String(contentsOf: folder.appendingPathComponent("\(base).\(ext)"), encoding: .utf8)
            }
            let canonical = try read("creq")
            var (request, body) = try Self.parse(try read("req"))
            var credentials = Self.credentials
            // A case whose canonical request holds a token its request does not sends it from the credentials.
            if request.header("x-amz-security-token") == nil,
                let line = canonical.split(separator: "\n").first(where: { $0.hasPrefix("x-amz-security-token:") })
            {
                credentials.sessionToken = String(line.dropFirst("x-amz-security-token:".count))
            }
            let signer = SigV4Signer(credentials: credentials, region: "us-east-1", service: "service")
            let payloadHash = SigV4Signer.hexSHA256(of: Data(body.utf8))
            var withToken = request
            if let token = credentials.sessionToken { withToken.headers.append(("X-Amz-Security-Token", token)) }
            let made = signer.canonicalRequest(withToken, payloadHash: payloadHash)
            #expect(made.text == canonical, "\(name): canonical request")
            #expect(
                signer.stringToSign(canonicalRequest: made.text, date: Self.date) == (try read("sts")),
                "\(name): string to sign")
            signer.sign(&request, payloadHash: payloadHash, date: Self.date)
            #expect(request.header("Authorization") == (try read("authz")), "\(name): Authorization")
            body = ""
        }
    }

    /// A raw request of the suite: its request line (the target as sent, spaces included), headers (a line that
    /// starts with whitespace continues the one above) and body; the target's path and query decoded.
    static func parse(_ raw: String) throws -> (SigV4Signer.Request, body: String) {
        let sections = raw.components(separatedBy: "\n\n")
        let lines = sections[0].components(separatedBy: "\n")
        let requestLine = lines[0].split(separator: " ", omittingEmptySubsequences: false)
        let method = String(requestLine.first!)
        let target = requestLine.dropFirst().dropLast().joined(separator: " ")
        let (path, query) =
            if let mark = target.firstIndex(of: "?") {
                (String(target[..<mark]), String(target[target.index(after: mark)...]))
            } else {
                (target, "")
            }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            if line.first == " " || line.first == "\t", !headers.isEmpty {
                headers[headers.count - 1].value += " " + line
            } else if let colon = line.firstIndex(of: ":") {
                headers.append((String(line[..<colon]), String(line[line.index(after: colon)...])))
            }
        }
        let items: [(name: String, value: String)] = query.split(separator: "&").map { item in
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (decoded(pair[0]), pair.count > 1 ? decoded(pair[1]) : "")
        }
        let request = SigV4Signer.Request(method: method, path: decoded(path[...]), query: items, headers: headers)
        return (request, sections.dropFirst().joined(separator: "\n\n"))
    }

    static func decoded(_ text: Substring) -> String { String(text).removingPercentEncoding ?? String(text) }
}
