import Logging

/// What a ``MultipartSpooler`` has collected of one form so far, and the counts its limits bound.
struct FormCollector {
    private let spooler: MultipartSpooler
    private var limits: MultipartSpooler.Limits { spooler.limits }
    private var fields: [(head: MultipartParser.PartHead, bytes: [UInt8])] = []
    private var files: [SpooledFile] = []
    /// Bytes held in memory: fields, and files under the memory threshold.
    private var memoryBytes: Int64 = 0
    /// Bytes written to spooled files.
    private var diskBytes: Int64 = 0
    /// Bytes taken from the spooler's shared ``MultipartSpooler/DiskBudget`` for a file not yet handed to its owner
    /// (the one being written); given back if the form fails.
    private var budgetHeld: Int64 = 0

    /// The body's watchdog, when the spooler has a body timeout: paused while the store is waited on.
    private let watchdog: BodyWatchdog?

    init(spooler: MultipartSpooler, watchdog: BodyWatchdog? = nil) {
        self.spooler = spooler
        self.watchdog = watchdog
    }

    /// What each part costs against ``MultipartSpooler/Limits/maxMemoryBytes`` beside its name and the bytes kept
    /// in memory: its record and its text, rounded up. A flood of empty fields is bounded as a large field is.
    static let partOverhead = 128

    /// Charges a part's name and record against the memory budget.
    private mutating func chargeRecord(_ head: MultipartParser.PartHead) throws {
        let cost = Int64(head.name.utf8.count + Self.partOverhead)
        guard memoryBytes + cost <= limits.maxMemoryBytes else {
            throw breach("maxMemoryBytes", limits.maxMemoryBytes, "bytes the form keeps in memory", head)
        }
        memoryBytes += cost
    }

    /// Reads a field's value into memory; `recorded` is the head to keep, when not the part's own (a file inside a
    /// multipart/mixed part keeps the outer part's index).
    mutating func collectField<Base>(
        _ part: MultipartParts<Base>.Part, recorded: MultipartParser.PartHead? = nil,
        isolation actor: isolated (any Actor)?
    ) async throws {
        let head = recorded ?? part.head
        try chargeRecord(head)
        var bytes: [UInt8] = []
        var body = part.body.makeAsyncIterator()
        while let chunk = try await body.next(isolation: actor) {
            guard memoryBytes + Int64(bytes.count + chunk.count) <= limits.maxMemoryBytes else {
                throw breach("maxMemoryBytes", limits.maxMemoryBytes, "bytes the form keeps in memory", head)
            }
            bytes += chunk
        }
        memoryBytes += Int64(bytes.count)
        fields.append((head, bytes))
    }

    /// Spools the files inside a multipart/mixed part, each as a file of the outer field, under the same limits
    /// (they count as files). Depth 1: a multipart/mixed part inside it is kept as a field.
    mutating func spoolMixed<Base>(
        _ part: MultipartParts<Base>.Part, mode: MultipartParser.Mode, isolation actor: isolated (any Actor)?
    ) async throws {
        let outer = part.head
        do {
            var files = try part.mixedParts(limits: limits.parser, mode: mode).makeAsyncIterator()
            while let file = try await files.next(isolation: actor) {
                var recorded = file.head
                recorded.index = outer.index
                if recorded.isFile {
                    try await spoolFile(file, recorded: recorded, isolation: actor)
                } else {
                    try await collectField(file, recorded: recorded, isolation: actor)
                }
            }
        } catch var error as MultipartError where error.partIndex != outer.index || error.offset != nil {
            // The nested body's offsets and part numbers are its own: say where it sits.
            error.message =
                "inside part \(outer.index) (\(outer.name.debugDescription), multipart/mixed): "
                + error.message
            error.partIndex = outer.index
            throw error
        }
    }

    /// Streams a file part to a new file in the spool folder (or to memory, under the memory threshold), hashing
    /// it on the way.
    mutating func spoolFile<Base>(
        _ part: MultipartParts<Base>.Part, recorded: MultipartParser.PartHead? = nil,
        isolation actor: isolated (any Actor)?
    ) async throws {
        let head = recorded ?? part.head
        guard files.count < limits.maxFiles else {
            throw breach("maxFiles", Int64(limits.maxFiles), "files", head)
        }
        try chargeRecord(head)
        if let store = spooler.store { return try await storeFile(part, head: head, in: store, isolation: actor) }
        var digest = spooler.digest?.init()
        var inMemory: [UInt8] = []
        var writer: SpoolWriter?
        var count: Int64 = 0
        var body = part.body.makeAsyncIterator()
        while let chunk = try await body.next(isolation: actor) {
            count += Int64(chunk.count)
            if writer == nil {
                if count <= limits.memoryThreshold && memoryBytes + count <= limits.maxMemoryBytes {
                    digest?.update(chunk)
                    inMemory += chunk
                    continue
                }
                try checkDisk(adding: inMemory.count, head)
                let file = try createFile(for: head)
                do {
                    writer = try SpoolWriter(file: file, digest: digest.take(), hashed: inMemory)
                } catch {
                    throw writeFailure(error, file, head)
                }
                diskBytes += Int64(inMemory.count)
                inMemory = []
            }
            try await write(chunk, to: &writer!, head, isolation: actor)
        }
        if writer == nil && limits.memoryThreshold == 0 {
            // An empty file, on disk as every other.
            writer = try SpoolWriter(file: try createFile(for: head), digest: digest.take())
        }
        var file: TemporaryFile?
        if let finished = writer.take() {
            file = finished.file
            do {
                digest = try await finished.finish(isolation: actor)
            } catch {
                throw writeFailure(error, file!, head)
            }
        }
        let hash = digest.map { digest in
            var digest = digest
            return SpooledFile.Digest(algorithm: type(of: digest).algorithm, bytes: digest.finalize())
        }
        let filename = head.preferredFilename ?? ""
        let storage: SpooledFile.Storage
        if let file {
            storage = .disk(SpoolFileOwner(file, budget: spooler.diskBudget, budgeted: budgetHeld))
            budgetHeld = 0  // the owner gives it back when the file leaves the spool
        } else {
            memoryBytes += count
            storage = .memory(inMemory)
        }
        files.append(
            SpooledFile(
                name: head.name, filename: filename, safeFilename: ContentDisposition.safeBaseName(filename),
                contentType: head.contentType, byteCount: count,
                digest: hash,
                partIndex: head.index, storage: storage))
    }

    /// The form, its fields decoded.
    ///
    /// - Throws: ``MultipartError/Code/unsupportedCharset``.
    func finish() throws -> SpooledForm {
        let formCharset = fields.first { $0.head.name == "_charset_" }
            .map { String(decoding: $0.bytes, as: UTF8.self) }
        let decoded = try fields.map { head, bytes in
            let partCharset = head.contentType.flatMap { try? ContentType(parsing: $0) }?.charset
            let value = try FieldCharset.decode(
                bytes, charset: partCharset ?? formCharset, partIndex: head.index, name: head.name)
            return SpooledForm.Field(
                name: head.name, value: value, bytes: bytes, contentType: head.contentType, partIndex: head.index)
        }
        return SpooledForm(fields: decoded, files: files, charset: formCharset)
    }

    /// Removes every file spooled so far (from the store too) and gives back what the form took from the shared
    /// disk budget.
    func discard() async {
        for file in files { file.remove() }
        spooler.diskBudget?.release(budgetHeld)
        let stored = files.compactMap(\.storedObject)
        guard let store = spooler.store, !stored.isEmpty else { return }
        let logger = spooler.logger
        await Self.uncancelled {
            for object in stored {
                do {
                    try await store.remove(object)
                } catch {
                    logger.warning(
                        "a file of a failed form was left in the store", error: error,
                        metadata: ["object.key": "\(object.key)", "object.location": "\(object.location)"])
                }
            }
        }
    }

    /// Streams a file part into the spooler's store (or to memory, under the memory threshold), hashing it on the
    /// way; aborts the file in the store when anything fails.
    private mutating func storeFile<Base>(
        _ part: MultipartParts<Base>.Part, head: MultipartParser.PartHead, in store: any MultipartFileStore,
        isolation actor: isolated (any Actor)?
    ) async throws {
        var digest = spooler.digest?.init()
        var inMemory: [UInt8] = []
        var writer: (any MultipartStoreWriter)?
        var count: Int64 = 0
        let file = MultipartStoreFile(
            name: head.name, filename: head.preferredFilename ?? "", contentType: head.contentType,
            partIndex: head.index)
        do {
            var body = part.body.makeAsyncIterator()
            while let chunk = try await body.next(isolation: actor) {
                count += Int64(chunk.count)
                digest?.update(chunk)
                if writer == nil {
                    if count <= limits.memoryThreshold && memoryBytes + count <= limits.maxMemoryBytes {
                        inMemory += chunk
                        continue
                    }
                    try checkStored(adding: inMemory.count + chunk.count, head)
                    writer = try await begin(file, in: store, head)
                    if !inMemory.isEmpty { try await append(inMemory[...], to: writer!, head) }
                    inMemory = []
                } else {
                    try checkStored(adding: chunk.count, head)
                }
                try await append(chunk, to: writer!, head)
            }
            if writer == nil && limits.memoryThreshold == 0 { writer = try await begin(file, in: store, head) }
        } catch {
            if let writer { await Self.uncancelled { await writer.abort() } }
            throw error
        }
        let hash = digest.map { digest in
            var digest = digest
            return SpooledFile.Digest(algorithm: type(of: digest).algorithm, bytes: digest.finalize())
        }
        let storage: SpooledFile.Storage
        if let writer {
            do {
                watchdog?.pause()
                defer { watchdog?.resume() }
                storage = .stored(try await writer.finish(byteCount: count, digest: hash))
            } catch {
                await Self.uncancelled { await writer.abort() }
                throw storeFailure(error, "finishing", head)
            }
        } else {
            memoryBytes += count
            storage = .memory(inMemory)
        }
        files.append(
            SpooledFile(
                name: head.name, filename: file.filename, safeFilename: ContentDisposition.safeBaseName(file.filename),
                contentType: head.contentType, byteCount: count, digest: hash, partIndex: head.index,
                storage: storage))
    }

    private func begin(
        _ file: MultipartStoreFile, in store: any MultipartFileStore, _ head: MultipartParser.PartHead
    ) async throws -> any MultipartStoreWriter {
        watchdog?.pause()  // the store's wait is not the client's
        defer { watchdog?.resume() }
        do {
            return try await store.begin(file)
        } catch {
            throw storeFailure(error, "beginning", head)
        }
    }

    private func append(
        _ bytes: ArraySlice<UInt8>, to writer: any MultipartStoreWriter, _ head: MultipartParser.PartHead
    ) async throws {
        watchdog?.pause()
        defer { watchdog?.resume() }
        do {
            try await writer.append(bytes)
        } catch {
            throw storeFailure(error, "storing", head)
        }
    }

    /// Counts bytes stored against ``MultipartSpooler/Limits/maxDiskBytes``.
    private mutating func checkStored(adding count: Int, _ head: MultipartParser.PartHead) throws {
        guard diskBytes + Int64(count) <= limits.maxDiskBytes else {
            throw breach("maxDiskBytes", limits.maxDiskBytes, "bytes of files stored", head)
        }
        diskBytes += Int64(count)
    }

    /// A store's failure as the spooler reports it: ``MultipartError/Code/writeFailed`` with the store's error as
    /// its cause; cancellation as it is.
    private func storeFailure(_ error: any Error, _ doing: String, _ head: MultipartParser.PartHead) -> any Error {
        if error is CancellationError || error is MultipartError { return error }
        return MultipartError(
            code: .writeFailed, message: "\(doing) \(describe(head)) in the spooler's store failed: \(error)",
            partIndex: head.index, cause: error)
    }

    /// Runs `work` in a task of its own and waits for it: cleanup that a cancelled request must still finish.
    private static func uncancelled(_ work: @escaping @Sendable () async -> Void) async {
        await Task.detached(operation: work).value
    }

    private func createFile(for head: MultipartParser.PartHead) throws -> TemporaryFile {
        do {
            return try TemporaryFile(inDirectory: spooler.directory, prefix: SpoolFileName.prefix)
        } catch {
            throw MultipartError(
                code: .writeFailed,
                message: "cannot create a file in the spool folder \(spooler.directory) for \(describe(head))",
                partIndex: head.index, cause: error)
        }
    }

    private mutating func write(
        _ bytes: ArraySlice<UInt8>, to writer: inout SpoolWriter, _ head: MultipartParser.PartHead,
        isolation actor: isolated (any Actor)?
    ) async throws {
        try checkDisk(adding: bytes.count, head)
        do {
            try await writer.append(bytes, isolation: actor)
        } catch {
            throw writeFailure(error, writer.file, head)
        }
        diskBytes += Int64(bytes.count)
    }

    private mutating func checkDisk(adding count: Int, _ head: MultipartParser.PartHead) throws {
        guard diskBytes + Int64(count) <= limits.maxDiskBytes else {
            throw breach("maxDiskBytes", limits.maxDiskBytes, "bytes of files on disk", head)
        }
        guard let budget = spooler.diskBudget else { return }
        guard budget.reserve(Int64(count)) else {
            throw MultipartError(
                code: .insufficientStorage,
                message: "\(describe(head)) needs more disk than the spooler's shared budget has left "
                    + "(\(budget.usedBytes) of \(budget.bytes) bytes held by uploads in progress)",
                partIndex: head.index)
        }
        budgetHeld += Int64(count)
    }

    private func writeFailure(_ error: any Error, _ file: TemporaryFile, _ head: MultipartParser.PartHead)
        -> MultipartError
    {
        MultipartError(
            code: .writeFailed, message: "writing \(describe(head)) to \(file.path) failed", partIndex: head.index,
            cause: error)
    }

    private func breach(_ limit: String, _ value: Int64, _ what: String, _ head: MultipartParser.PartHead)
        -> MultipartError
    {
        MultipartError(
            code: .limitExceeded,
            message: "\(describe(head)) takes the form past \(limit) (\(value) \(what))", partIndex: head.index)
    }

    private func describe(_ head: MultipartParser.PartHead) -> String {
        "part \(head.index) (\"\(head.name)\")"
    }
}
