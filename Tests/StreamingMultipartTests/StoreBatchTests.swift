import Testing

@testable import StreamingMultipart

/// The batch the spooler gathers for a store is the store's to ask for (`preferredBatchBytes`), within a bound: a
/// store's word never makes one upload hold more than 8 MiB of batch in memory.
struct StoreBatchTests {
    /// A writer that asks for `asked` bytes a batch and takes nothing.
    struct Asking: MultipartStoreWriter {
        let asked: Int
        var preferredBatchBytes: Int { asked }
        nonisolated(nonsending) func append(_ bytes: MultipartBytes) async throws {}
        func finish(byteCount: Int64, digest: SpooledFile.Digest?) async throws -> MultipartStoredObject {
            MultipartStoredObject(key: "k", location: "nowhere")
        }
        func abort() async {}
    }

    /// A writer that says nothing of its batch.
    struct Silent: MultipartStoreWriter {
        nonisolated(nonsending) func append(_ bytes: MultipartBytes) async throws {}
        func finish(byteCount: Int64, digest: SpooledFile.Digest?) async throws -> MultipartStoredObject {
            MultipartStoredObject(key: "k", location: "nowhere")
        }
        func abort() async {}
    }

    @Test func aStoreThatAsksForHugeBatchesGetsAtMostEightMiB() {
        #expect(HashingStoreWriter(Asking(asked: .max), digest: nil, watchdog: nil).batchBytes == 8 << 20)
        #expect(HashingStoreWriter(Asking(asked: 4 << 20), digest: nil, watchdog: nil).batchBytes == 4 << 20)
        #expect(HashingStoreWriter(Asking(asked: -1), digest: nil, watchdog: nil).batchBytes == 0)
        #expect(HashingStoreWriter(Silent(), digest: nil, watchdog: nil).batchBytes == 0)
    }
}
