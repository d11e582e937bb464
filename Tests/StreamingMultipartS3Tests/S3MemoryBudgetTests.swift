import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

@testable import StreamingMultipartS3

/// How the S3 store's uploads share a ``MultipartMemoryBudget``: a part is charged whole when it begins, so an
/// upload that waits for room holds none of the budget, and uploads that gather in turn never starve each other.
///
/// Before, a part was charged 1 MiB at a time as it filled: 50 slow uploads into a 48 MiB budget each held about
/// 1 MiB, none could finish a 5 MiB part, and all of them failed with 503 after the budget's wait.
@Suite struct S3MemoryBudgetTests {
    static let partSize = 5 << 20

    func store(_ peer: S3Peer, budget: MultipartMemoryBudget) throws -> S3Store {
        var configuration = try peer.configuration(bucket: try peer.makeBucket(), partSize: Self.partSize)
        configuration.memoryBudget = budget
        return try S3Store(configuration: configuration)
    }

    func file(_ index: Int) -> MultipartStoreFile {
        MultipartStoreFile(name: "f\(index)", filename: "f\(index).bin", contentType: nil, partIndex: index)
    }

    @Test(.enabled(if: S3Peer.motoAvailable, "needs moto[server], boto3 and awscli (pip), the local S3 endpoint"))
    func aPartIsChargedWholeAndAWaitingUploadHoldsNothing() async throws {
        let budget = MultipartMemoryBudget(bytes: 2 * Self.partSize, maxWait: .seconds(600))
        let store = try store(try S3Peer.shared(.moto), budget: budget)
        let first = try await store.begin(file(0))
        let second = try await store.begin(file(1))
        try await first.append(MultipartBytes([1][...]))
        #expect(budget.usedBytes == Self.partSize, "one byte charges its whole part")
        try await second.append(MultipartBytes([2][...]))
        #expect(budget.usedBytes == 2 * Self.partSize)

        // A third upload finds no room: it waits, and what it waits with is not charged.
        let third = try await store.begin(file(2))
        let waiting = Task { try await third.append(MultipartBytes([UInt8](repeating: 3, count: 1 << 20)[...])) }
        for _ in 0..<10_000 where budget.waitingCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
        try #require(budget.waitingCount == 1, "the third upload waits for room")
        #expect(budget.usedBytes == 2 * Self.partSize, "the waiting upload holds none of the budget")

        // The first file is stored (one PutObject): its part is given back, and the third goes on with it.
        _ = try await first.finish(byteCount: 1, digest: nil)
        try await waiting.value
        #expect(budget.waitingCount == 0)
        #expect(budget.usedBytes == 2 * Self.partSize)
        _ = try await second.finish(byteCount: 1, digest: nil)
        _ = try await third.finish(byteCount: 1 << 20, digest: nil)
        #expect(budget.usedBytes == 0, "every part given back once its file is stored")
    }

    /// Twelve forms whose files each take a part and a half, into a budget of three parts and a wait longer than
    /// the test may run: every one is stored, whatever order the uploads interleave in. Uploads that starved each
    /// other would wait for ever, and the time limit says so; no wall-clock wait decides it (300 s ran out once
    /// under four busy loops a core, with the whole suite on one moto).
    @Test(
        .enabled(if: S3Peer.motoAvailable, "needs moto[server], boto3 and awscli (pip), the local S3 endpoint"),
        .timeLimit(.minutes(20)))
    func uploadsThatOutnumberTheBudgetAllFinishInTurn() async throws {
        let budget = MultipartMemoryBudget(bytes: 3 * Self.partSize, maxWait: .seconds(24 * 3600))
        let spooler = MultipartSpooler(
            store: try store(try S3Peer.shared(.moto), budget: budget), limits: .untimed)
        let bytes = [UInt8](repeating: 7, count: Self.partSize * 3 / 2)
        var body = MultipartBody()
        try body.append(.data(Data(bytes), name: "video", filename: "v.bin"))
        let encoded = try body.bytes()
        let contentType = body.contentType
        let stored = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    let form = try await spooler.spool(
                        chunkStream(encoded, size: 256 << 10), contentType: contentType)
                    return form.files.count
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(stored == 12)
        #expect(budget.usedBytes == 0)
    }

    /// The first bytes the filter and the store's allow-list see are a view of the file's first chunk: the upload
    /// lets it go once it has begun, and does not hold it (a `ByteBuffer` an upload) while the rest of a 12 MiB file
    /// goes up in three parts.
    @Test(.enabled(if: S3Peer.motoAvailable, "needs moto[server], boto3 and awscli (pip), the local S3 endpoint"))
    func anUploadDoesNotHoldTheFilesFirstChunk() async throws {
        let budget = MultipartMemoryBudget(bytes: 4 * Self.partSize)
        let spooler = MultipartSpooler(
            store: try store(try S3Peer.shared(.moto), budget: budget), limits: .untimed)
        var random = SeededGenerator(seed: 49)
        let file = random.bytes(12 << 20)
        let body = try OneFileForm(file, filename: "v.bin", contentType: "video/mp4")
        let watch = LenderWatch()
        let form = try await spooler.spool(
            AsyncStream.lending(body.chunks, watching: 1, watch, looks: 10), contentType: body.contentType)
        #expect(form.files.first?.storedObject?.attributes["etag"]?.hasSuffix("-3\"") == true)
        #expect(watch.aliveWhenLooked.count == 10)
        #expect(!watch.aliveWhenLooked.contains(true), "\(watch.aliveWhenLooked)")
    }
}
