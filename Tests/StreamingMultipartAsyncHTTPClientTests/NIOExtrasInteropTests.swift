import AsyncHTTPClient
import Foundation
import MultipartTestSupport
import NIOCore
import NIOHTTP1
import StreamingMultipart
import StreamingMultipartAsyncHTTPClient
import Testing

/// swift-nio-extras' NIOResumableUploadDemo where Tests/Peers/build_nio_resumable_demo.sh builds it; nil before.
let nioResumableUploadDemo: String? = {
    let path = Repository.root.appendingPathComponent(".build/nio-extras-demo/build/debug/NIOResumableUploadDemo")
    return FileManager.default.isExecutableFile(atPath: path.path) ? path.path : nil
}()

/// This package's client against swift-nio-extras' own resumable upload server: its demo, NIOResumableUploadDemo
/// (built by Tests/Peers/build_nio_resumable_demo.sh from the checkout this package resolved; `.ci/run` builds it),
/// which writes each upload to a file named by its path and answers `201 Created`. The demo always listens on port
/// 8080 and names its uploads `http://localhost:8080/…`; front.py, which cuts the first request, names itself there
/// instead, so that the resumption comes through it too (a client resumes only on the origin it uploaded to). Its
/// module speaks interop versions 3, 5 and 6 (drafts 01–05).
@Suite(
    .serialized,
    .enabled(
        if: nioResumableUploadDemo != nil,
        "swift-nio-extras' NIOResumableUploadDemo was not built (Tests/Peers/build_nio_resumable_demo.sh)"),
    .enabled(if: Peers.pythonMultipart != nil, "needs python3 for Tests/Peers/front.py (.ci/run installs it)"),
    .timeLimit(.minutes(3))
)
struct NIOExtrasInteropTests {
    let python = Peers.pythonMultipart ?? "python3"

    /// The demo serving `folder`, until `stop()`.
    final class Demo {
        let process = Process()
        let output = Pipe()

        /// Starts the demo and waits for its "Listening on 8080" (its output line-buffered by `stdbuf`; a demo that
        /// cannot bind the port ends first, and says why on its standard error).
        init(serving folder: TemporaryFolder) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/stdbuf")
            process.arguments = ["-oL", try #require(nioResumableUploadDemo), folder.url.path]
            process.standardOutput = output
            try process.run()
            var line = Data()
            while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data([10]) {
                line += byte
            }
            let said = String(decoding: line, as: UTF8.self)
            guard said == "Listening on 8080" else {
                stop()
                throw MultipartError(
                    code: .invalidState, message: "the demo did not listen on 8080 (is the port taken?): \(said)")
            }
        }

        func stop() {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }

    /// A form of known length (a resumable upload needs one) with a file of a few MiB.
    func form(_ folder: TemporaryFolder) throws -> MultipartBody {
        var body = MultipartBody()
        var random = SeededGenerator(seed: 51)
        try body.append(.text("from StreamingMultipart", name: "caption"))
        let file = try folder.file("photo.bin", contents: random.bytes(3 << 20))
        try body.append(.file(at: file, name: "photo", contentType: "application/octet-stream"))
        try body.append(.data(Data(random.bytes(70_000)), name: "thumb", filename: "t.bin"))
        return body
    }

    /// Runs `body` with the demo serving a folder of its own (`uploads`), front.py before it (`front`, its port:
    /// it cuts the first connection after 1 MB, and names itself where the demo names its origin), and a folder for
    /// the form's files.
    func withDemo(
        _ body: (_ uploads: URL, _ front: Int, _ folder: TemporaryFolder) async throws -> Void
    ) async throws {
        let uploads = try TemporaryFolder()
        defer { uploads.remove() }
        let demo = try Demo(serving: uploads)
        defer { demo.stop() }
        let front = try PeerUploadServer.front(
            python: python, targetPort: 8080, actions: ["cut:1000000", "proxy"], origin: "http://localhost:8080")
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try await body(uploads.url, front.port, folder)
    }

    /// Cut after 1 MB, a form offered in interop version 6 resumes on the demo's server: its `104` names the upload,
    /// the client asks the offset and sends the rest, and the file the demo wrote is the body, byte for byte.
    @Test func aCutFormResumesOnItsServerByteForByte() async throws {
        try await withDemo { uploads, front, folder in
            let body = try form(folder)
            var options = HTTPClient.MultipartUploadOptions()
            options.maxResumptions = 3
            options.resumableInteropVersion = "6"
            let events = Locked<[HTTPClient.MultipartUploadEvent]>([])
            options.onEvent = { event in events.set(events.get() + [event]) }

            let response = try await watchingClient.upload(
                body, to: "http://127.0.0.1:\(front)/interop/form.bin", options: options)
            _ = try await response.body.collect(upTo: 1 << 20)
            #expect(response.status.code == 201, "\(events.get())")
            let resumed = events.get().compactMap { if case .resuming(let from, _, _) = $0 { from } else { nil } }
            #expect(resumed.count == 1 && resumed[0] > 0, "one resumption, from the offset: \(events.get())")
            let written = try [UInt8](Data(contentsOf: uploads.appendingPathComponent("interop/form.bin")))
            let sent = try body.bytes()
            #expect(written.count == sent.count && written == sent, "\(written.count) bytes written of \(sent.count)")
        }
    }

    /// `multipart send --resume-version 6`, cut after 1 MB, resumes on the demo too: the file it wrote is what
    /// `multipart build` makes of the same arguments and boundary, byte for byte. An unspoken version is refused
    /// before anything is sent.
    @Test(.enabled(if: Peers.multipart != nil, "needs the multipart binary beside the test bundle (swift build)"))
    func multipartSendResumesOnItWhenToldItsVersion() async throws {
        try await withDemo { uploads, front, folder in
            var random = SeededGenerator(seed: 52)
            let file = try folder.file("photo.bin", contents: random.bytes(3 << 20))
            let tool = try #require(Peers.multipart)
            let form = ["--boundary", "interop-51", "-F", "caption=Sunset", "-F", "photo=@\(file.path)"]
            let sent = try runProgram(
                tool,
                ["send", "http://127.0.0.1:\(front)/interop/cli.bin", "--resume-version", "6", "--progress", "none"]
                    + form)
            #expect(sent.status == 0, "\(sent.stderr)")
            #expect(sent.stderr.contains("resuming from byte"), "\(sent.stderr)")
            let built = try runProgram(tool, ["build"] + form)
            let written = try [UInt8](Data(contentsOf: uploads.appendingPathComponent("interop/cli.bin")))
            #expect(
                built.stdout.count > 3 << 20 && written == built.stdout, "\(written.count) of \(built.stdout.count)")

            let refused = try runProgram(
                tool, ["send", "http://127.0.0.1:8080/interop/x", "--resume-version", "7"] + form)
            #expect(
                refused.status != 0 && refused.stderr.contains("--resume-version takes 6 or 8"), "\(refused.stderr)")
        }
    }

    /// In interop version 8 (draft 09, the client's default), which the demo does not speak, it answers
    /// `400 Bad Request` at once and writes nothing, where the server here takes a version it does not speak for a
    /// plain request: a client of swift-nio-extras' server (1.35.2) must offer version 6
    /// (`options.resumableInteropVersion`), as the first test does. When this fails, the module has changed: say so
    /// in ResumingUploads.md's table.
    @Test func aVersionItDoesNotSpeakIsRefused() async throws {
        try await withDemo { uploads, _, folder in
            var options = HTTPClient.MultipartUploadOptions()
            options.maxResumptions = 3
            let response = try await watchingClient.upload(
                try form(folder), to: "http://127.0.0.1:8080/interop/eight.bin", options: options)
            _ = try await response.body.collect(upTo: 1 << 20)
            #expect(response.status.code == 400)
            let written = uploads.appendingPathComponent("interop/eight.bin")
            let bytes = (try? Data(contentsOf: written)) ?? Data()
            #expect(bytes.isEmpty, "nothing written: \(bytes.count) bytes")
        }
    }
}
