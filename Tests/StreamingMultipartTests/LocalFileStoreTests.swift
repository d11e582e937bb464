import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// A store of the caller's own that writes to this machine's disk and gives the form its files, as the spool folder
/// does: through ``MultipartStoreWriter/localFile()``, with no downcast the library keeps for its own folder.
struct ScratchStore: MultipartFileStore {
    let folder: URL

    func begin(_ file: MultipartStoreFile) async throws -> any MultipartStoreWriter {
        let path = folder.appendingPathComponent("scratch-\(UUID().uuidString)").path
        guard FileManager.default.createFile(atPath: path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        return Writer(path: path, handle: try FileHandle(forWritingTo: URL(fileURLWithPath: path)))
    }

    func remove(_ object: MultipartStoredObject) async throws { try FileManager.default.removeItem(atPath: object.key) }

    final class Writer: MultipartStoreWriter, @unchecked Sendable {
        let path: String
        let handle: FileHandle

        init(path: String, handle: FileHandle) {
            self.path = path
            self.handle = handle
        }

        func append(_ bytes: MultipartBytes) async throws { try handle.write(contentsOf: bytes.arraySlice) }

        func finish(byteCount: Int64, digest: SpooledFile.Digest?) async throws -> MultipartStoredObject {
            try handle.close()
            return MultipartStoredObject(key: path, location: "file://" + path)
        }

        func abort() async {
            try? handle.close()
            try? FileManager.default.removeItem(atPath: path)
        }

        func localFile() -> (any MultipartLocalFile)? { ScratchFile(path: path) }
    }

    /// The form's file: moved with `rename(2)`, removed when asked or when the last form holding it goes away.
    final class ScratchFile: MultipartLocalFile, @unchecked Sendable {
        private let lock = NSLock()
        private var held: String?

        init(path: String) { held = path }

        var path: String? { lock.withLock { held } }

        func move(to destination: String) throws {
            try lock.withLock {
                guard let path = held else {
                    throw MultipartError(code: .fileNotFound, message: "the scratch file was moved or removed")
                }
                guard rename(path, destination) == 0 else {
                    throw MultipartError(code: .writeFailed, message: "cannot move \(path) to \(destination)")
                }
                held = nil
            }
        }

        func remove() {
            let path = lock.withLock {
                defer { held = nil }
                return held
            }
            if let path { unlink(path) }
        }

        deinit { remove() }
    }
}

/// A third-party store that gives the form local files is served as the spool folder is: its files have paths, are
/// read, moved out and removed with the form, and a failed form leaves its folder empty.
@Suite struct LocalFileStoreTests {
    func body(files: Int) throws -> MultipartBody {
        var body = MultipartBody()
        try body.append(.text("Sunset", name: "caption"))
        for index in 0..<files {
            try body.append(
                .data(Data(repeating: UInt8(index), count: 3000), name: "f\(index)", filename: "\(index).bin"))
        }
        return body
    }

    @Test func aStoresLocalFilesAreTheFormsToReadMoveAndRemove() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let spool = folder.url.appendingPathComponent("spool")
        try FileManager.default.createDirectory(at: spool, withIntermediateDirectories: false)
        let body = try body(files: 2)
        let spooler = MultipartSpooler(store: ScratchStore(folder: spool), limits: .untimed)
        let kept = folder.url.appendingPathComponent("kept.bin").path
        let paths = try await spooler.withSpooledForm(
            chunkStream(try body.bytes(), size: 1000),
            contentType: body.contentType
        ) { form in
            #expect(form.files.allSatisfy { $0.path != nil && $0.storedObject == nil && !$0.isInMemory })
            #expect(try form.files[1].contents() == Array(repeating: 1, count: 3000))
            try form.files[0].move(to: kept)
            #expect(form.files[0].path == nil)
            let again = #expect(throws: MultipartError.self) { try form.files[0].move(to: kept) }
            #expect(again?.code == .fileNotFound && again?.partIndex == 1, "the form says which part")
            return form.files.compactMap(\.path)
        }
        #expect(paths.count == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool.path) == [], "removed with the form")
        #expect(FileManager.default.contents(atPath: kept) == Data(repeating: 0, count: 3000), "moved out: kept")
    }

    @Test func aFailedFormLeavesTheStoresFolderEmpty() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var limits = MultipartSpooler.Limits.untimed
        limits.maxFiles = 2
        let body = try body(files: 3)
        let spooler = MultipartSpooler(store: ScratchStore(folder: folder.url), limits: limits)
        let error = await #expect(throws: MultipartError.self) {
            _ = try await spooler.spool(chunkStream(try body.bytes(), size: 1000), contentType: body.contentType)
        }
        #expect(error?.code == .limitExceeded)
        #expect(try folder.contents() == [])
    }
}
