import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// Bodies built here, parsed by Python's python-multipart and Werkzeug: every field, filename, content type and
/// SHA-256 must match. Enabled where python3 and the packages are present; `.ci/run` installs them.
@Suite(
    .enabled(if: Peers.pythonParsers != nil, "needs python3 with python-multipart and Werkzeug (.ci/run installs them)")
)
struct PythonInteropTests {
    func parse(_ body: MultipartBody, with peer: String, python: String) throws -> [PeerPart] {
        let bytes = try body.bytes()
        let result = try runProgram(
            python, [Repository.peerScript("parse_form.py"), peer, body.contentType], input: bytes)
        #expect(result.status == 0, "\(peer): \(result.stderr)")
        return try JSONDecoder().decode(PeerReply.self, from: Data(result.stdout)).parts ?? []
    }

    @Test(arguments: ["python-multipart", "werkzeug"])
    func randomFormsParseBackExactly(peer: String) throws {
        let python = try #require(Peers.pythonParsers)
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var random = SeededGenerator(seed: peer == "werkzeug" ? 11 : 22)
        for round in 0..<40 {
            let form = try RandomForm(random: &random, folder: folder, maxSize: round < 36 ? 5000 : 1_500_000)
            let parsed = try parse(form.body, with: peer, python: python)
            if peer == "werkzeug" {
                // Werkzeug returns fields and files apart, each in order.
                #expect(parsed.sorted() == form.expected.sorted(), "round \(round)")
            } else {
                #expect(parsed == form.expected, "round \(round)")
            }
        }
    }

    @Test(arguments: ["python-multipart", "werkzeug"])
    func goldenKindsParse(peer: String) throws {
        let python = try #require(Peers.pythonParsers)
        var body = MultipartBody()
        try body.append(parameters: ["user": ["name": "Ann"], "tags": ["a", "b"]])
        try body.append(.file(at: Repository.input("notes.txt"), name: "notes"))
        try body.append(.data(Data([0, 255, 13, 10]), name: "bin", filename: "b.dat", contentType: "application/x-b"))
        let notes = try Data(contentsOf: Repository.input("notes.txt"))
        let parsed = try parse(body, with: peer, python: python).sorted()
        let expected = [
            PeerPart(name: "tags[]", filename: nil, content_type: nil, size: 1, sha256: sha256Hex(Array("a".utf8))),
            PeerPart(name: "tags[]", filename: nil, content_type: nil, size: 1, sha256: sha256Hex(Array("b".utf8))),
            PeerPart(
                name: "user[name]", filename: nil, content_type: nil, size: 3, sha256: sha256Hex(Array("Ann".utf8))),
            PeerPart(
                name: "notes", filename: "notes.txt", content_type: "text/plain", size: notes.count,
                sha256: sha256Hex(notes)),
            PeerPart(
                name: "bin", filename: "b.dat", content_type: "application/x-b", size: 4,
                sha256: sha256Hex([0, 255, 13, 10])),
        ].sorted()
        #expect(parsed == expected)
    }
}
