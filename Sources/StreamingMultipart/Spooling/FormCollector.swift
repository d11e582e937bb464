import Logging
import Metrics
import Tracing

/// What a ``MultipartSpooler`` has collected of one form so far, and the counts its limits bound.
struct FormCollector {
    private let spooler: MultipartSpooler
    private var limits: MultipartSpooler.Limits { spooler.limits }
    private var fields: [(head: MultipartParser.PartHead, bytes: [UInt8])] = []
    private var files: [SpooledFile] = []
    /// Bytes held in memory: fields, and files under the memory threshold.
    private var memoryBytes: Int64 = 0
    /// Bytes of files handed to the store (the spool folder's or another).
    private var storedBytes: Int64 = 0
    /// File parts the spooler's file filter skipped: they count against ``MultipartSpooler/Limits/maxFiles``.
    private var skippedFiles = 0
    /// The form's id in the store (``MultipartStoreFile/form``), made when its first file begins; empty until then,
    /// and for the spooler's own folder, which keeps no forms.
    private var form = ""

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

    /// Keeps a field read whole elsewhere (an urlencoded form's), under the same budget as ``collectField``.
    mutating func keepField(_ head: MultipartParser.PartHead, bytes: [UInt8]) throws {
        try chargeRecord(head)
        guard memoryBytes + Int64(bytes.count) <= limits.maxMemoryBytes else {
            throw breach("maxMemoryBytes", limits.maxMemoryBytes, "bytes the form keeps in memory", head)
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
                "inside part \(outer.index + 1) (\(outer.name.debugDescription), multipart/mixed): "
                + error.message
            error.partIndex = outer.index
            throw error
        }
    }

    /// Streams a file part into the spooler's store (the spool folder unless it has another), or keeps it in memory
    /// under the memory threshold; hashes it on the way; aborts the file in the store when anything fails.
    mutating func spoolFile<Base>(
        _ part: MultipartParts<Base>.Part, recorded: MultipartParser.PartHead? = nil,
        isolation actor: isolated (any Actor)?
    ) async throws {
        let head = recorded ?? part.head
        let start = ContinuousClock.now
        defer { spooler.metrics.fileDuration.record(duration: .now - start) }
        try await withSpan(MultipartMetrics.fileSpan, isolation: actor) { span in
            span.attributes["multipart.part_index"] = head.index
            try await spoolFile(part, head: head, span: span, isolation: actor)
        }
    }

    /// ``spoolFile(_:recorded:isolation:)`` inside the file's span, which it gives the file's sniffed type and size.
    private mutating func spoolFile<Base>(
        _ part: MultipartParts<Base>.Part, head: MultipartParser.PartHead, span: any Span,
        isolation actor: isolated (any Actor)?
    ) async throws {
        guard files.count + skippedFiles < limits.maxFiles else {
            throw breach("maxFiles", Int64(limits.maxFiles), "files", head)
        }
        // The file's first bytes, for the filter and the store to see what it is; in the file, and nowhere else.
        var body = part.body.makeAsyncIterator()
        var fileHead = FileHead()
        var file = MultipartStoreFile(
            name: head.name, filename: head.preferredFilename ?? "", contentType: head.contentType,
            partIndex: head.index,
            head: try await fileHead.read(
                min(max(spooler.fileHeadBytes, 0), MultipartSpooler.maxFileHeadBytes), of: &body, isolation: actor),
            logger: spooler.logger)
        if span.isRecording { span.attributes["multipart.sniffed_type"] = file.sniffedMediaType }
        switch spooler.fileFilter?(file) ?? .store {
        case .store: break
        case .skip:
            skippedFiles += 1
            while try await body.next(isolation: actor) != nil {}
            return
        case .refuse(let status, let message):
            var refusal = MultipartError(code: .fileRefused, message: message, partIndex: head.index)
            refusal.refusalStatus = status
            throw refusal
        }
        try chargeRecord(head)
        let store = spooler.fileStore
        var digest = spooler.digest?.init()
        var inMemory: [UInt8] = []
        var writer: HashingStoreWriter?
        var count: Int64 = 0
        do {
            while true {
                // The bytes where the body's chunk put them (an array's slice, a ByteBuffer's region): the store
                // takes them without a copy.
                let chunk: MultipartBytes
                if let read = fileHead.nextUnstored() {
                    chunk = read
                } else if let slice = try await body.next(isolation: actor) {
                    chunk = slice.multipartBytes
                } else {
                    break
                }
                count += Int64(chunk.count)
                if writer == nil {
                    if digest != nil { chunk.withSpan { digest!.update($0) } }
                    if count <= limits.memoryThreshold && memoryBytes + count <= limits.maxMemoryBytes {
                        chunk.withSpan { inMemory.append(copying: $0.bytes) }
                        continue
                    }
                    try checkStored(adding: inMemory.count + chunk.count, head)
                    // What was kept in memory, and this chunk: as it is when nothing was kept.
                    let hashed: MultipartBytes
                    if inMemory.isEmpty {
                        hashed = chunk
                    } else {
                        chunk.withSpan { inMemory.append(copying: $0.bytes) }
                        hashed = MultipartBytes(inMemory[...])
                    }
                    writer = try await begin(&file, in: store, digest: digest.take(), head)
                    file.firstBytes = []  // a view of the first chunk: not held while the rest of the file streams
                    do {
                        try await writer!.append(hashed: hashed)
                    } catch {
                        throw storeFailure(error, "storing", head)
                    }
                    inMemory = []
                    continue
                }
                try checkStored(adding: chunk.count, head)
                do {
                    try await writer!.append(chunk)
                } catch {
                    throw storeFailure(error, "storing", head)
                }
            }
            if writer == nil && limits.memoryThreshold == 0 {
                // An empty file, in the store as every other.
                writer = try await begin(&file, in: store, digest: digest.take(), head)
            }
        } catch {
            if let writer = writer.take() { await Self.abort(writer.store) }
            throw error
        }
        let storage: SpooledFile.Storage
        let hash: SpooledFile.Digest?
        if var writer = writer.take() {
            do {
                hash = try await writer.finish().map(Self.finalize)
                let store = writer.store
                let object = try await writer.paused { try await store.finish(byteCount: count, digest: hash) }
                // A file the store gives the form as a local file (the spool folder's) is the form's; any other
                // is the caller's, where the store put it.
                storage = store.localFile().map { .disk($0) } ?? .stored(object)
            } catch {
                await Self.abort(writer.store)
                throw storeFailure(error, "finishing", head)
            }
        } else {
            hash = digest.map(Self.finalize)
            memoryBytes += count
            storage = .memory(inMemory)
        }
        span.attributes["multipart.bytes"] = count
        files.append(
            SpooledFile(
                name: head.name, filename: file.filename, safeFilename: ContentDisposition.safeBaseName(file.filename),
                contentType: head.contentType, byteCount: count, digest: hash, partIndex: head.index,
                storage: storage))
    }

    /// The form, its fields decoded.
    ///
    /// - Throws: ``MultipartError/Code/unsupportedCharset``.
    func finish() throws -> SpooledForm {
        let formCharset = fields.first { $0.head.name == FieldCharset.formCharsetField }
            .map { String(decoding: $0.bytes, as: UTF8.self) }
        let decoded = try fields.map { head, bytes in
            let partCharset = FieldCharset.ofPart(contentType: head.contentType)
            let value = try FieldCharset.decode(
                bytes, charset: partCharset ?? formCharset, partIndex: head.index, name: head.name)
            return SpooledForm.Field(
                name: head.name, value: value, bytes: bytes, contentType: head.contentType, partIndex: head.index)
        }
        return SpooledForm(fields: decoded, files: files, charset: formCharset)
    }

    /// Ends the whole form in the store (``MultipartFileStore/commit(form:objects:)``), once every part is in.
    ///
    /// - Throws: the store's ``MultipartError``, or ``MultipartError/Code/writeFailed`` with the store's error.
    func commit() async throws {
        guard !form.isEmpty else { return }
        watchdog?.pause()
        defer { watchdog?.resume() }
        do {
            try await spooler.fileStore.commit(form: form, objects: files.compactMap(\.storedObject))
        } catch let error as MultipartError {
            throw error
        } catch {
            throw MultipartError(
                code: .writeFailed, message: "committing the form in the spooler's store failed: \(error)",
                cause: error)
        }
    }

    /// Removes every file spooled so far: those in the spool folder (whose owners give back their share of the disk
    /// budget) and those in another store; then ends the form in the store
    /// (``MultipartFileStore/discard(form:)``).
    func discard() async {
        for file in files { file.remove() }
        guard case .store(let store) = spooler.destination, !form.isEmpty else { return }
        let stored = files.compactMap(\.storedObject)
        let (logger, form) = (spooler.logger, form)
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
            await store.discard(form: form)
        }
    }

    /// A form's id: 32 hex digits from the system's CSPRNG (two calls of it, not one a byte).
    private static func formID() -> String {
        var random = SystemRandomNumberGenerator()
        let (high, low) = (random.next() as UInt64, random.next() as UInt64)
        return Hex.lowercase((0..<16).map { UInt8(truncatingIfNeeded: ($0 < 8 ? high : low) >> (8 * ($0 % 8))) })
    }

    /// Begins the file in the store, as a file of this form, and a writer into it that continues `digest`.
    private nonisolated(nonsending) mutating func begin(
        _ file: inout MultipartStoreFile, in store: any MultipartFileStore, digest: consuming (any SpoolDigest)?,
        _ head: MultipartParser.PartHead
    ) async throws -> HashingStoreWriter {
        if form.isEmpty, case .store = spooler.destination { form = Self.formID() }  // the folder keeps no forms
        file.form = form
        watchdog?.pause()  // the store's wait is not the client's
        defer { watchdog?.resume() }
        do {
            return HashingStoreWriter(try await store.begin(file), digest: digest, watchdog: watchdog)
        } catch {
            throw storeFailure(error, "beginning", head)
        }
    }

    private static func finalize(_ digest: any SpoolDigest) -> SpooledFile.Digest {
        var digest = digest
        return SpooledFile.Digest(algorithm: type(of: digest).algorithm, bytes: digest.finalize())
    }

    /// Aborts a file in the store, in a task of its own: a cancelled request still cleans up.
    private static func abort(_ writer: any MultipartStoreWriter) async {
        await uncancelled { await writer.abort() }
    }

    /// Counts bytes stored against ``MultipartSpooler/Limits/maxDiskBytes``.
    private mutating func checkStored(adding count: Int, _ head: MultipartParser.PartHead) throws {
        guard storedBytes + Int64(count) <= limits.maxDiskBytes else {
            let what =
                if case .folder = spooler.destination { "bytes of files on disk" } else { "bytes of files stored" }
            throw breach("maxDiskBytes", limits.maxDiskBytes, what, head)
        }
        storedBytes += Int64(count)
        spooler.metrics.spooled.increment(by: count)
    }

    /// A store's failure as the spooler reports it: ``MultipartError/Code/writeFailed`` with the store's error as
    /// its cause; cancellation as it is.
    private func storeFailure(_ error: any Error, _ doing: String, _ head: MultipartParser.PartHead) -> any Error {
        if error is CancellationError { return error }
        if var error = error as? MultipartError {
            // A store's own typed error (``MultipartError/Code/storeUnavailable``, say), told of which part.
            guard error.partIndex == nil else { return error }
            error.partIndex = head.index
            error.message = "\(doing) \(describe(head)) in the spooler's store failed: \(error.message)"
            return error
        }
        return MultipartError(
            code: .writeFailed, message: "\(doing) \(describe(head)) in the spooler's store failed: \(error)",
            partIndex: head.index, cause: error)
    }

    /// Runs `work` in a task of its own and waits for it: cleanup that a cancelled request must still finish.
    private static func uncancelled(_ work: @escaping @Sendable () async -> Void) async {
        await Task.detached(operation: work).value
    }

    private func breach(_ limit: String, _ value: Int64, _ what: String, _ head: MultipartParser.PartHead)
        -> MultipartError
    {
        MultipartError(
            code: .limitExceeded,
            message: "\(describe(head)) takes the form past \(limit) (\(value) \(what))", partIndex: head.index,
            limit: limit)
    }

    private func describe(_ head: MultipartParser.PartHead) -> String {
        "part \(head.index + 1) (\"\(head.name)\")"
    }
}
