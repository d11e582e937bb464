import Foundation
import MultipartTestSupport
import StreamingMultipart
import StreamingMultipartURLSession
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Bodies POSTed with URLSession to a small Python server on 127.0.0.1 (Tests/Peers/upload_server.py), which
/// parses them with python-multipart and reports the headers it got.
@Suite(
    .serialized, .enabled(if: Peers.pythonMultipart != nil, "needs python3 with python-multipart (.ci/run installs it)")
)
struct URLSessionInteropTests {
    func makeForm() throws -> (TemporaryFolder, RandomForm) {
        let folder = try TemporaryFolder()
        var random = SeededGenerator(seed: 99)
        var form = try RandomForm(random: &random, folder: folder, maxSize: 200_000)
        let big = try folder.file("big.bin", contents: random.bytes(3 << 20))
        try form.body.append(.file(at: big, name: "big"))
        form.expected.append(
            PeerPart(
                name: "big", filename: "big.bin", content_type: "application/octet-stream",
                size: 3 << 20, sha256: sha256Hex(try Data(contentsOf: big))))
        return (folder, form)
    }

    /// Starts the server, builds the form, POSTs it with `send`, and returns what the server saw.
    func upload(
        _ send: (MultipartBody, inout URLRequest, TemporaryFolder) async throws -> (Data, URLResponse)
    ) async throws -> (reply: PeerReply, expected: [PeerPart]) {
        let server = try PeerUploadServer(python: try #require(Peers.pythonMultipart))
        let (folder, form) = try makeForm()
        defer { folder.remove() }
        var request = URLRequest(url: server.url)
        request.httpMethod = "POST"
        let (data, response) = try await send(form.body, &request, folder)
        let reply = try JSONDecoder().decode(PeerReply.self, from: data)
        #expect((response as? HTTPURLResponse)?.statusCode == 200, "server said: \(reply.error ?? "?")")
        return (reply, form.expected)
    }

    @Test func streamBodyArrivesWhole() async throws {
        let (reply, expected) = try await upload({ body, request, _ in
            request.setMultipartBody(body)
            return try await URLSession.shared.data(for: request)
        })
        #expect(reply.parts == expected)
        #expect(!(reply.content_length != nil && reply.transfer_encoding != nil), "both length headers were sent")
        #if canImport(FoundationNetworking)
        #expect(reply.transfer_encoding?.lowercased() == "chunked")
        #endif
    }

    @Test func fileBodyArrivesWithAnExactContentLength() async throws {
        let length = Locked<Int64>(-1)
        let (reply, expected) = try await upload({ body, request, folder in
            let file = folder.url.appendingPathComponent("request.body")
            length.set(try request.setMultipartBody(body, writingTo: file))
            return try await URLSession.shared.upload(for: request, fromFile: file)
        })
        #expect(reply.parts == expected)
        #expect(reply.content_length == String(length.get()))
        #expect(reply.transfer_encoding == nil)
        #expect(Int64(reply.received ?? -1) == length.get())
    }

    /// A gzip-compressed form, streamed and from a file: the Python server inflates it with zlib and finds the same
    /// parts.
    @Test(arguments: [MultipartBody.Compression.gzip, .deflate])
    func compressedBodiesArriveWhole(compression: MultipartBody.Compression) async throws {
        for fromFile in [false, true] {
            let (reply, expected) = try await upload({ body, request, folder in
                if fromFile {
                    let file = folder.url.appendingPathComponent("request.body")
                    try request.setMultipartBody(body, writingTo: file, compression: compression)
                    return try await URLSession.shared.upload(for: request, fromFile: file)
                }
                request.setMultipartBody(body, compression: compression)
                return try await URLSession.shared.data(for: request)
            })
            #expect(reply.error == nil, "\(reply.error ?? "")")
            #expect(reply.parts == expected, "\(compression) fromFile \(fromFile)")
            #expect(reply.content_encoding == compression.contentEncoding)
            #expect(!(reply.content_length != nil && reply.transfer_encoding != nil), "both length headers were sent")
        }
    }
}
