import Foundation
import MultipartTestSupport
import Testing

@testable import StreamingMultipart

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `write(to:)` hands file parts to the kernel (`copy_file_range` on Linux) and reads the rest; the body file is
/// the same bytes either way.
@Suite struct KernelCopyTests {
    /// Text, two files of odd sizes, memory and an empty file: every kind of part on both sides of a file.
    func body(in folder: TemporaryFolder) throws -> MultipartBody {
        var random = SeededGenerator(seed: 16)
        var body = MultipartBody()
        try body.append(.text("before", name: "caption"))
        try body.append(.file(at: try folder.file("a.bin", contents: random.bytes(3 << 20 | 7)), name: "a"))
        try body.append(.data(Data(random.bytes(1000)), name: "memory", filename: "m.bin"))
        try body.append(.file(at: try folder.file("b.bin", contents: random.bytes(65_537)), name: "b"))
        try body.append(.file(at: try folder.file("empty.bin", contents: []), name: "empty"))
        try body.append(.text("after", name: "tail"))
        return body
    }

    @Test func theBodyFileIsTheSameBytesAsTheReaderGives() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let body = try body(in: folder)
        let target = folder.url.appendingPathComponent("upload.body")
        let length = try body.write(to: target)
        #expect(length == body.contentLength)
        #expect([UInt8](try Data(contentsOf: target)) == (try body.bytes()))
    }

    /// Where the kernel copies, a file part reaches the body file with none of its bytes read by this process.
    @Test(.enabled(if: canListOpenFiles, "copy_file_range is Linux's"))
    func onLinuxAFilePartIsCopiedInTheKernel() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let content = SeededGenerator(seed: 5).withBytes(1 << 20)
        var body = MultipartBody()
        try body.append(.file(at: try folder.file("f.bin", contents: content), name: "f"))
        let destination = try OpenFile(
            path: folder.url.appendingPathComponent("out").path, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600)
        // The head goes byte by byte, as usual; at the file's first byte the kernel takes over.
        var fresh = body.makeReader()
        var prefix = [UInt8]()
        while try fresh.copyFileContent(to: destination) == .notHere {
            _ = try prefix.append(capacity: 1) { try fresh.read(into: &$0) }
        }
        #expect(prefix.count > 0 && fresh.currentPartIndex == 0)
        destination.close()
        let copied = try Data(contentsOf: folder.url.appendingPathComponent("out"))
        #expect([UInt8](copied) == content)
        #expect(fresh.bytesRead == Int64(prefix.count + content.count))
        var rest = [UInt8]()
        while true {
            let count = try rest.append(capacity: 4096) { try fresh.read(into: &$0) }
            if count == 0 { break }
        }
        #expect(prefix + content + rest == (try body.bytes()))
    }

    /// A destination the kernel will not copy into (a pipe) is refused before any byte moves; reading goes on from
    /// the same place. Reads of 40,000 bytes go straight into the buffer, so a read ends inside the file with nothing
    /// staged, where the reader offers the copy.
    @Test func aPipeIsRefusedAndTheReaderGoesOn() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let content = SeededGenerator(seed: 6).withBytes(200_000)
        var body = MultipartBody()
        try body.append(.file(at: try folder.file("f.bin", contents: content), name: "f"))
        let pipe = Pipe()
        let destination = OpenFile(owning: pipe.fileHandleForWriting.fileDescriptor)
        defer { destination.release() }
        var reader = body.makeReader()
        var bytes = [UInt8]()
        var refusals = 0
        while true {
            switch try reader.copyFileContent(to: destination) {
            case .copied(let count): Issue.record("copied \(count) bytes into a pipe")
            case .refused: refusals += 1
            case .notHere: break
            }
            let count = try bytes.append(capacity: 40_000) { try reader.read(into: &$0) }
            if count == 0 { break }
        }
        #expect(refusals >= 1)
        #expect(bytes == (try body.bytes()))
    }

    /// A disk that fills mid-copy is a write failure with ENOSPC, and no file is left: the copy fails as a write does.
    @Test(.enabled(if: SmallDisk.canMount, "needs root to mount a 1 MiB tmpfs"))
    func aFullDiskDuringTheCopyLeavesNothing() throws {
        let disk = try SmallDisk(megabytes: 1)
        let folder = try TemporaryFolder()
        defer {
            disk.unmount()
            folder.remove()
        }
        var body = MultipartBody()
        try body.append(
            .file(at: try folder.file("big.bin", contents: [UInt8](repeating: 1, count: 3 << 20)), name: "f"))
        let error = #expect(throws: MultipartError.self) {
            try body.write(to: URL(fileURLWithPath: disk.path).appendingPathComponent("upload.body"))
        }
        #expect(error?.code == .writeFailed)
        #expect(error.flatMap { $0.cause as? SystemCallError }?.errno == ENOSPC, "\(String(describing: error))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path) == [])
    }

    /// A compressed body, and a body whose boundary the caller chose (its files are watched for it), are read,
    /// never copied: the kernel would skip the compression and the watch.
    @Test func compressedOrWatchedBodiesAreNotCopied() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("f.bin", contents: [UInt8](repeating: 9, count: 100_000))
        var chosen = MultipartBody(boundary: try MultipartBoundary("chosen-boundary"))
        try chosen.append(.file(at: file, name: "f"))
        var random = MultipartBody()
        try random.append(.file(at: file, name: "f"))
        let destination = try OpenFile(
            path: folder.url.appendingPathComponent("out").path, flags: O_WRONLY | O_CREAT, mode: 0o600)
        func expectNeverCopied(_ reader: inout BodyReader) throws {
            while true {
                #expect(try reader.copyFileContent(to: destination) == .notHere)
                var chunk = [UInt8]()
                if try chunk.append(capacity: 512, { try reader.read(into: &$0) }) == 0 { break }
            }
        }
        var watched = chosen.makeReader()
        try expectNeverCopied(&watched)
        var compressed = random.makeReader(compression: .gzip)
        try expectNeverCopied(&compressed)
        #expect(try destination.status().size == 0)
        for (body, compression) in [(chosen, nil), (random, MultipartBody.Compression.gzip)] {
            let target = folder.url.appendingPathComponent("body")
            try body.write(to: target, compression: compression)
            var reader = body.makeReader(compression: compression)
            #expect([UInt8](try Data(contentsOf: target)) == (try reader.readAll()))
        }
    }
}

extension SeededGenerator {
    fileprivate func withBytes(_ count: Int) -> [UInt8] {
        var copy = self
        return copy.bytes(count)
    }
}
