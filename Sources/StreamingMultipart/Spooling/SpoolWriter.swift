/// Writes one file part to its spooled file and hashes it, the two overlapped: bytes are gathered into batches of
/// about 1 MiB, and each batch is hashed on another thread while this one writes it.
///
/// Hashing alone (SHA-256 with SHA-NI, 1.8 GB/s) is slower here than the kernel's copy into the page cache
/// (`cat`, 2.9 GB/s): done one after the other they ran at a third of `cat`'s speed, overlapped at about half
/// (`Benchmarks/`, SpoolBenchmarks). Memory: one batch of slices of the source's chunks.
struct SpoolWriter: ~Copyable {
    let file: TemporaryFile
    private var digest: (any SpoolDigest)?
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
        self.digest = digest
        try hashed.withUnsafeBytes { try file.file.write($0) }
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
        return digest
    }

    private mutating func flush(isolation actor: isolated (any Actor)?) async throws {
        guard !pending.isEmpty else { return }
        let batch = pending
        let overlaps = pendingBytes >= Self.overlapMinimum
        pending.removeAll(keepingCapacity: true)
        pendingBytes = 0
        if overlaps, let digest {
            async let hashed = Self.hash(batch, into: digest)
            try write(batch)
            self.digest = await hashed
        } else {
            for bytes in batch { digest?.update(bytes) }
            try write(batch)
        }
    }

    private func write(_ batch: [ArraySlice<UInt8>]) throws {
        for bytes in batch {
            try bytes.withUnsafeBytes { try file.file.write($0) }
        }
    }

    private static func hash(_ batch: [ArraySlice<UInt8>], into digest: any SpoolDigest) -> any SpoolDigest {
        var digest = digest
        for bytes in batch { digest.update(bytes) }
        return digest
    }
}
