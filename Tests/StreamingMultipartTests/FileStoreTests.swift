import Foundation
import InMemoryLogging
import Logging
import MultipartTestSupport
import StreamingMultipart
import Testing

/// A store in memory that records what the spooler asks of it, and fails where a test tells it to.
final class RecordingStore: MultipartFileStore, @unchecked Sendable {
    struct Failure: Error {}
    private let lock = NSLock()
    private var nextKey = 0
    /// Finished objects, by key, with their bytes.
    private(set) var objects: [String: [UInt8]] = [:]
    /// Files begun and neither finished nor aborted.
    private(set) var inProgress: Set<String> = []
    private(set) var aborted: [String] = []
    private(set) var removed: [String] = []
    /// Each file as the spooler began it.
    private(set) var begun: [MultipartStoreFile] = []
    /// Fail the append that would bring a file past this many bytes.
    var failAppendPast: Int?
    /// Fail `finish` of the file with this part index.
    var failFinishOfPart: Int?
    /// Fail every `remove`, as a store that went away would.
    var failRemove = false
    /// How long each append takes, as a slow object store's would: it moves `clock` on by that much (no wall time
    /// passes).
    var appendDelay: (Duration, on: ManualClock)?

    func begin(_ file: MultipartStoreFile) async throws -> any MultipartStoreWriter {
        let key = lock.withLock {
            nextKey += 1
            begun.append(file)
            inProgress.insert("k\(nextKey)")
            return "k\(nextKey)"
        }
        return Writer(store: self, key: key, partIndex: file.partIndex)
    }

    /// Like a network store whose requests end when their task is cancelled: a cancelled task removes nothing.
    func remove(_ object: MultipartStoredObject) async throws {
        try Task.checkCancellation()
        if failRemove { throw Failure() }
        lock.withLock {
            objects[object.key] = nil
            removed.append(object.key)
        }
    }

    var isEmpty: Bool { lock.withLock { objects.isEmpty && inProgress.isEmpty } }
    var objectCount: Int { lock.withLock { objects.count } }

    final class Writer: MultipartStoreWriter, @unchecked Sendable {
        let store: RecordingStore
        let key: String
        let partIndex: Int
        private var bytes: [UInt8] = []

        init(store: RecordingStore, key: String, partIndex: Int) {
            self.store = store
            self.key = key
            self.partIndex = partIndex
        }

        func append(_ chunk: MultipartBytes) async throws {
            if let (delay, clock) = store.appendDelay { clock.advance(by: delay) }
            if let limit = store.failAppendPast, bytes.count + chunk.count > limit { throw Failure() }
            bytes += chunk.arraySlice
        }

        func finish(byteCount: Int64, digest: SpooledFile.Digest?) async throws -> MultipartStoredObject {
            if store.failFinishOfPart == partIndex { throw Failure() }
            #expect(byteCount == Int64(bytes.count))
            store.lock.withLock {
                store.inProgress.remove(key)
                store.objects[key] = bytes
            }
            return MultipartStoredObject(key: key, location: "memory://\(key)")
        }

        func abort() async {
            guard !Task.isCancelled else { return }
            store.lock.withLock {
                store.inProgress.remove(key)
                store.aborted.append(key)
            }
        }
    }
}

/// The spooler with a ``MultipartFileStore``: files go to the store, and every failure leaves it empty.
@Suite struct FileStoreTests {
    static let photo: [UInt8] = {
        var random = SeededGenerator(seed: 18)
        return random.bytes(200_000)
    }()

    func body() throws -> MultipartBody {
        var body = MultipartBody()
        try body.append(.text("Sunset", name: "caption"))
        try body.append(.data(Data(Self.photo), name: "photo", filename: "a/../sun.jpg", contentType: "image/jpeg"))
        try body.append(.data(Data(), name: "empty", filename: "empty.txt"))
        try body.append(.data(Data(Self.photo.prefix(5000)), name: "photo", filename: "b.jpg"))
        return body
    }

    @Test(arguments: [1000, 65536])
    func filesGoToTheStoreWithTheirDigests(chunk: Int) async throws {
        let store = RecordingStore()
        let body = try body()
        let form = try await MultipartSpooler(store: store, limits: .untimed, digest: FNV1aDigest.self).spool(
            chunkStream(try body.bytes(), size: chunk), contentType: body.contentType)
        #expect(form.value(of: "caption") == "Sunset")
        #expect(form.files.map(\.filename) == ["a/../sun.jpg", "empty.txt", "b.jpg"])
        #expect(form.files.allSatisfy { $0.storedObject != nil && $0.path == nil && !$0.isInMemory })
        let stored = form.files.map { store.objects[$0.storedObject!.key] }
        #expect(stored == [Self.photo, [], Array(Self.photo.prefix(5000))])
        #expect(form.files[0].digest?.hex == FNV1aDigest.hex(Self.photo))
        #expect(throws: MultipartError.self) { try form.files[0].contents() }
        form.removeFiles()  // a form read whole: its stored files are the caller's
        #expect(store.objects.count == 3 && store.inProgress.isEmpty)
    }

    /// The spool folder is a store like any other, down one path: the same form, through the folder and through a
    /// store of the caller's, gives the same files, digests (hashed beside the writes in both), memory threshold
    /// and refusals at a limit.
    @Test(arguments: [4096, 1 << 20])
    func theFolderAndAStoreGoDownOnePath(chunk: Int) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var random = SeededGenerator(seed: 30)
        let large = random.bytes(3 << 20)  // past a batch, so that the hash runs beside the writes
        var body = try body()
        try body.append(.data(Data(large), name: "video", filename: "v.mp4"))
        var limits = MultipartSpooler.Limits.untimed
        limits.memoryThreshold = 10_000
        let store = RecordingStore()
        let toFolder = MultipartSpooler(directory: folder.url, limits: limits, digest: FNV1aDigest.self)
        let toStore = MultipartSpooler(store: store, limits: limits, digest: FNV1aDigest.self)
        let inFolder = try await toFolder.spool(
            chunkStream(try body.bytes(), size: chunk), contentType: body.contentType)
        let inStore = try await toStore.spool(chunkStream(try body.bytes(), size: chunk), contentType: body.contentType)
        defer { inFolder.removeFiles() }
        #expect(inFolder.files.map(\.byteCount) == inStore.files.map(\.byteCount))
        #expect(inFolder.files.map(\.digest) == inStore.files.map(\.digest))
        #expect(inFolder.files.map(\.isInMemory) == [false, true, true, false])
        #expect(inStore.files.map(\.isInMemory) == [false, true, true, false])
        #expect(inStore.files[3].digest?.hex == FNV1aDigest.hex(large))
        for (local, stored) in zip(inFolder.files, inStore.files) where !local.isInMemory {
            #expect(try local.contents() == store.objects[stored.storedObject!.key])
        }

        // A limit breached mid-file: the same error from both, and nothing left in either.
        limits.maxDiskBytes = 1 << 20
        var refusals: [MultipartError?] = []
        for spooler in [toFolder, toStore] {
            var spooler = spooler
            spooler.limits = limits
            let error = await #expect(throws: MultipartError.self) {
                try await spooler.spool(chunkStream(try body.bytes(), size: chunk), contentType: body.contentType)
            }
            refusals.append(error)
        }
        #expect(refusals.map { $0?.partIndex } == [4, 4])
        #expect(refusals.map { $0?.code } == [.limitExceeded, .limitExceeded])
        #expect(try folder.contents().count == inFolder.files.filter { !$0.isInMemory }.count)
        #expect(store.objectCount == 2 && store.inProgress.isEmpty)
    }

    @Test func smallFilesStayInMemoryUnderTheThreshold() async throws {
        let store = RecordingStore()
        var limits = MultipartSpooler.Limits.untimed
        limits.memoryThreshold = 10_000
        let body = try body()
        let form = try await MultipartSpooler(store: store, limits: limits).spool(
            chunkStream(try body.bytes(), size: 777), contentType: body.contentType)
        #expect(form.files.map(\.isInMemory) == [false, true, true])
        #expect(store.objects.values.map(\.count) == [Self.photo.count])
        #expect(try form.files[2].contents() == Array(Self.photo.prefix(5000)))
    }

    /// Each failure after a file was stored: the store ends empty, the file in progress aborted, before the error.
    @Test func everyFailureLeavesTheStoreEmpty() async throws {
        let form = try body()
        let bytes = try form.bytes()
        let contentType = form.contentType
        // The body cut inside the last file: the first files are stored, the last in progress.
        let cut = Array(bytes.prefix(bytes.count - 2000))

        let dropped = RecordingStore()
        await #expect(throws: DroppedConnection.Reset.self) {
            _ = try await MultipartSpooler(store: dropped, limits: .untimed).spool(
                DroppedConnection(bytes: cut, size: 4096), contentType: contentType)
        }
        #expect(dropped.isEmpty && dropped.removed.count == 2 && dropped.aborted.count == 1)

        let truncated = RecordingStore()
        await #expect(throws: MultipartError.self) {
            _ = try await MultipartSpooler(store: truncated, limits: .untimed).spool(
                chunkStream(cut, size: 4096), contentType: contentType)
        }
        #expect(truncated.isEmpty && truncated.removed.count == 2)

        let failing = RecordingStore()
        failing.failAppendPast = 100_000
        do {
            _ = try await MultipartSpooler(store: failing, limits: .untimed).spool(
                chunkStream(bytes, size: 4096), contentType: contentType)
            Issue.record("a failing store spooled")
        } catch let error as MultipartError {
            #expect(error.code == .writeFailed && error.cause is RecordingStore.Failure && error.partIndex == 1)
            #expect(error.message.contains("\"photo\""))
        }
        #expect(failing.isEmpty && failing.aborted.count == 1)

        let finishing = RecordingStore()
        finishing.failFinishOfPart = 3
        await #expect(throws: MultipartError.self) {
            _ = try await MultipartSpooler(store: finishing, limits: .untimed).spool(
                chunkStream(bytes, size: 4096), contentType: contentType)
        }
        #expect(finishing.isEmpty && finishing.removed.count == 2 && finishing.aborted.count == 1)

        var limits = MultipartSpooler.Limits.untimed
        limits.maxDiskBytes = 150_000
        let limited = RecordingStore()
        do {
            _ = try await MultipartSpooler(store: limited, limits: limits).spool(
                chunkStream(bytes, size: 4096), contentType: contentType)
            Issue.record("a form past maxDiskBytes spooled")
        } catch let error as MultipartError {
            #expect(error.code == .limitExceeded && error.message.contains("maxDiskBytes"))
        }
        #expect(limited.isEmpty && limited.aborted.count == 1)
    }

    /// A stored file that the store would not remove when the form failed: the spooler cannot throw it (the form's
    /// own error comes first), so it logs it, naming the object left behind.
    @Test func aFileTheStoreWouldNotRemoveIsLogged() async throws {
        let form = try body()
        let bytes = try form.bytes()
        let store = RecordingStore()
        store.failRemove = true
        let logs = InMemoryLogHandler()
        let logger = Logger(label: "spooler", factory: { _ in logs })
        await #expect(throws: MultipartError.self) {
            _ = try await MultipartSpooler(store: store, limits: .untimed, logger: logger).spool(
                chunkStream(Array(bytes.prefix(bytes.count - 2000)), size: 4096), contentType: form.contentType)
        }
        let warnings = logs.entries.filter { $0.level == .warning }
        #expect(warnings.count == 2, "the two files stored before the body was cut")
        #expect(Set(warnings.compactMap { $0.metadata["object.key"]?.description }) == Set(store.objects.keys))
        #expect(warnings.allSatisfy { $0.error is RecordingStore.Failure && "\($0.message)".contains("left") })
    }

    /// A store slower than the body timeout's window: the waits are the store's, not the client's. Each append
    /// takes 1.5 s on the test's clock, so a window counting the waits would see no byte at all; the client's
    /// chunks themselves arrive at once. Without the pause around the store's calls, the third window fails.
    @Test func aSlowStoreIsNotASlowClient() async throws {
        let store = RecordingStore()
        let clock = ManualClock()
        store.appendDelay = (.milliseconds(1500), on: clock)
        var limits = MultipartSpooler.Limits()
        limits.bodyTimeout = MultipartBodyTimeout(minimumBytesPerSecond: 64 << 10, window: .seconds(1))
        let body = try body()
        var spooler = MultipartSpooler(store: store, limits: limits)
        spooler.clock = clock
        let start = clock.now
        let form = try await spooler.spool(chunkStream(try body.bytes(), size: 64 << 10), contentType: body.contentType)
        #expect(form.files.count == 3 && store.objectCount == 3)
        #expect(clock.now - start >= .seconds(3), "the store's appends took their time")
    }

    @Test func aCancelledSpoolStillEmptiesTheStore() async throws {
        let store = RecordingStore()
        let form = try body()
        let bytes = try form.bytes()
        let contentType = form.contentType
        // The body stops after the first files and never ends: the task is cancelled while it waits.
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        // The cut: inside the last part's headers, after the photo and the empty file.
        let end = bytes.count - 5000 - 60
        continuation.yield(Array(bytes.prefix(end)))
        let spool = Task {
            try await MultipartSpooler(store: store, limits: .untimed).spool(stream, contentType: contentType)
        }
        for _ in 0..<1000 where store.objectCount == 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(store.objectCount > 0, "the first files were stored before the body stalled")
        spool.cancel()
        continuation.finish()
        await #expect(throws: (any Error).self) { _ = try await spool.value }
        #expect(store.isEmpty && store.removed.count == 2)
    }
}
