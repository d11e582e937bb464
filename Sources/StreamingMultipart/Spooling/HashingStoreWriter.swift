/// Streams one file part into its ``MultipartStoreWriter`` and hashes it, the two overlapped, whatever the store: the
/// spool folder, S3, a store of the caller's. Bytes are gathered into batches of the size the store asks for (1 MiB
/// for the spool folder; a chunk for a store that asks for none, see ``batchBytes``); each batch is handed to the
/// store, then hashed by a task of its own when it is at least ``overlapMinimum``, which goes on while this one
/// gathers and stores the next batch. Batch N + 1's task starts as soon as the batch is stored and continues from
/// batch N's digest the moment it is ready, so the hash runs back to back; the writer waits for batch N's hash before
/// it gathers batch N + 3.
///
/// Hashing alone (SHA-256 with SHA-NI) is slower than the kernel's copy into the page cache, so a spooler that
/// hashed and then wrote each batch would run at the sum of the two times (`Benchmarks/`, SpoolBenchmarks). Memory:
/// three batches of slices of the source's chunks. The hashing tasks left behind by a failed store end by themselves
/// within two batches: they only read the slices they were given.
///
/// Every call into the store runs with the body's watchdog paused: the store's wait is not the client's.
struct HashingStoreWriter: ~Copyable {
    /// Where the digest stands.
    enum Hashing: Sendable {
        /// No digest was asked for.
        case off
        /// The digest of every byte stored so far.
        case done(any SpoolDigest)
        /// A task hashing the last batch stored, which ends with the digest of every byte stored so far.
        case running(Task<any SpoolDigest, Never>)
    }

    /// The store's writer, which the caller aborts when anything fails.
    let store: any MultipartStoreWriter
    private let watchdog: BodyWatchdog?
    private var hashing: Hashing
    private var pending: [MultipartBytes] = []
    private var pendingBytes = 0
    /// Bytes at the head of `pending` that the digest already holds.
    private var alreadyHashed = 0
    /// The hashing task before the one `hashing` holds, while it runs: the writer waits for it before it gathers
    /// another batch.
    private var inLine: Task<any SpoolDigest, Never>?

    /// Bytes gathered before a batch is stored: what the store asks for
    /// (``MultipartStoreWriter/preferredBatchBytes``, 1 MiB for the spool folder, 0 for S3's), a batch hashed beside
    /// the next.
    let batchBytes: Int
    /// The most a store may ask for: what one upload's batch holds in memory stays bounded whatever a store says.
    static let maxBatchBytes = 8 << 20
    /// Slices gathered before a batch is stored (tiny chunks from a slow client).
    static let batchSlices = 256
    /// The smallest batch worth another thread: below it the bytes are hashed here.
    static let overlapMinimum = 256 << 10

    /// A writer into `store`, continuing `digest`.
    init(_ store: any MultipartStoreWriter, digest: consuming (any SpoolDigest)?, watchdog: BodyWatchdog?) {
        self.store = store
        self.watchdog = watchdog
        batchBytes = min(max(0, store.preferredBatchBytes), Self.maxBatchBytes)
        hashing = digest.map { .done($0) } ?? .off
    }

    /// Adds the bytes the digest already holds, first of all: those kept in memory before the part outgrew the
    /// memory threshold. A full batch is stored now.
    ///
    /// - Throws: what the store's ``MultipartStoreWriter/append(_:)`` throws.
    nonisolated(nonsending) mutating func append(hashed bytes: MultipartBytes) async throws {
        precondition(pending.isEmpty && alreadyHashed == 0, "hashed bytes come first, once")
        guard bytes.count > 0 else { return }
        alreadyHashed = bytes.count
        try await append(bytes)
    }

    /// Adds the part's next bytes; a full batch is stored (and hashed) now.
    ///
    /// - Throws: what the store's ``MultipartStoreWriter/append(_:)`` throws.
    nonisolated(nonsending) mutating func append(_ bytes: MultipartBytes) async throws {
        guard bytes.count > 0 else { return }
        pending.append(bytes)
        pendingBytes += bytes.count
        if pendingBytes >= batchBytes || pending.count >= Self.batchSlices { try await flush() }
    }

    /// Stores what is gathered, and returns the digest of every byte.
    ///
    /// - Throws: what the store's ``MultipartStoreWriter/append(_:)`` throws.
    nonisolated(nonsending) mutating func finish() async throws -> (any SpoolDigest)? {
        try await flush()
        switch hashing {
        case .off: return nil
        case .done(let digest): return digest
        case .running(let task): return await task.value
        }
    }

    /// Runs one call into the store with the body's watchdog paused.
    nonisolated(nonsending) func paused<Result>(_ work: () async throws -> Result) async rethrows -> Result {
        watchdog?.pause()
        defer { watchdog?.resume() }
        return try await work()
    }

    private nonisolated(nonsending) mutating func flush() async throws {
        guard !pending.isEmpty else { return }
        var batch = pending
        let overlaps = pendingBytes - alreadyHashed >= Self.overlapMinimum
        pending.removeAll(keepingCapacity: true)
        pendingBytes = 0
        let store = store
        try await paused {  // while the previous batch is still being hashed
            for bytes in batch { try await store.append(bytes) }
        }
        if alreadyHashed > 0 {
            batch.removeFirst()  // the bytes kept in memory, hashed as they came
            alreadyHashed = 0
        }
        switch hashing {
        case .off:
            return
        case .running(let previous) where overlaps:
            // This batch's task starts now and continues from the previous one's digest the moment it is ready,
            // so the hash runs back to back. This call then waits for the task before the previous one, so that
            // three batches at most are held (one hashing, one next in line, one gathering): a hash that fell behind
            // while other work had the cores catches up without stopping the body.
            hashing = .running(Self.hash(batch, after: .running(previous)))
            if let inLine { _ = await inLine.value }
            inLine = previous
        case .done(let digest) where overlaps:
            hashing = .running(Self.hash(batch, after: .done(digest)))
        case .running(let previous):
            var digest = await previous.value
            inLine = nil
            Self.update(&digest, with: batch)
            hashing = .done(digest)
        case .done(var digest):
            Self.update(&digest, with: batch)
            hashing = .done(digest)
        }
    }

    /// A task hashing `batch` after the digest `before` stands for: detached, off the caller's actor (the main
    /// actor, say), so that it hashes beside the next stores.
    /// Adds `batch`'s bytes to `digest`, in order.
    private static func update(_ digest: inout any SpoolDigest, with batch: [MultipartBytes]) {
        for bytes in batch { bytes.withSpan { digest.update($0) } }
    }

    private static func hash(_ batch: [MultipartBytes], after before: Hashing) -> Task<any SpoolDigest, Never> {
        Task.detached(priority: Task.currentPriority) {
            var digest: any SpoolDigest
            switch before {
            case .running(let previous): digest = await previous.value
            case .done(let done): digest = done
            case .off: preconditionFailure("a batch is hashed only with a digest")
            }
            update(&digest, with: batch)
            return digest
        }
    }
}
