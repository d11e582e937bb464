/// Writes one file part to its spooled file and hashes it, the two overlapped: bytes are gathered into batches of
/// about 1 MiB; each batch is written, then hashed by a task of its own, which goes on while this one gathers and
/// writes the next batch. The hash of batch N is awaited only once batch N + 1 is written, since batch N + 1's hash
/// continues from it.
///
/// Hashing alone (SHA-256 with SHA-NI) is slower than the kernel's copy into the page cache, so a spooler that
/// hashed and then wrote each batch would run at the sum of the two times (`Benchmarks/`, SpoolBenchmarks). Memory:
/// two batches of slices of the source's chunks. A hashing task left behind by a failed write ends by itself within
/// one batch: it only reads the slices it was given.
struct SpoolWriter: ~Copyable {
    /// Where the digest stands.
    enum Hashing {
        /// No digest was asked for.
        case off
        /// The digest of every byte written so far.
        case done(any SpoolDigest)
        /// A task hashing the last batch written, which ends with the digest of every byte written so far.
        case running(Task<any SpoolDigest, Never>)
    }

    let file: TemporaryFile
    private var hashing: Hashing
    private var pending: [ArraySlice<UInt8>] = []
    private var pendingBytes = 0

    /// Bytes gathered before a batch is written.
    static let batchBytes = 1 << 20
    /// Slices gathered before a batch is written (tiny chunks from a slow client).
    static let batchSlices = 256
    /// The smallest batch worth another thread: below it the bytes are hashed here.
    static let overlapMinimum = 256 << 10

    /// A writer into `file`, continuing `digest`, which already holds `hashed`: the bytes kept in memory before
    /// the part outgrew the memory threshold, written now.
    ///
    /// - Throws: ``SystemCallError`` from `write`.
    init(file: TemporaryFile, digest: consuming (any SpoolDigest)?, hashed: [UInt8] = []) throws {
        self.file = file
        hashing = digest.map { .done($0) } ?? .off
        try hashed.withSpan { try file.file.write($0) }
    }

    /// Adds the part's next bytes; a full batch is written (and hashed) now.
    ///
    /// - Throws: ``SystemCallError`` from `write`.
    mutating func append(_ bytes: ArraySlice<UInt8>, isolation actor: isolated (any Actor)?) async throws {
        guard !bytes.isEmpty else { return }
        pending.append(bytes)
        pendingBytes += bytes.count
        if pendingBytes >= Self.batchBytes || pending.count >= Self.batchSlices {
            try await flush(isolation: actor)
        }
    }

    /// Writes what is gathered, and returns the digest of every byte.
    ///
    /// - Throws: ``SystemCallError`` from `write`.
    consuming func finish(isolation actor: isolated (any Actor)?) async throws -> (any SpoolDigest)? {
        try await flush(isolation: actor)
        switch hashing {
        case .off: return nil
        case .done(let digest): return digest
        case .running(let task): return await task.value
        }
    }

    private mutating func flush(isolation actor: isolated (any Actor)?) async throws {
        guard !pending.isEmpty else { return }
        let batch = pending
        let overlaps = pendingBytes >= Self.overlapMinimum
        pending.removeAll(keepingCapacity: true)
        pendingBytes = 0
        try write(batch)  // while the previous batch is still being hashed
        var digest: any SpoolDigest
        switch hashing {
        case .off: return
        case .done(let done): digest = done
        case .running(let task): digest = await task.value
        }
        if overlaps {
            // Detached: off the caller's actor (the main actor, say), so that it hashes beside the next writes.
            let start = digest
            hashing = .running(Task.detached(priority: Task.currentPriority) { Self.hash(batch, into: start) })
        } else {
            for bytes in batch { digest.update(bytes) }
            hashing = .done(digest)
        }
    }

    private func write(_ batch: [ArraySlice<UInt8>]) throws {
        for bytes in batch {
            try file.file.write(bytes.span)
        }
    }

    private static func hash(_ batch: [ArraySlice<UInt8>], into digest: any SpoolDigest) -> any SpoolDigest {
        var digest = digest
        for bytes in batch { digest.update(bytes) }
        return digest
    }
}
