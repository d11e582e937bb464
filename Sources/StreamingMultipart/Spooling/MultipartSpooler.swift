public import Foundation
public import Logging
import Metrics
import Tracing

/// Collects a multipart form arriving as an async sequence of chunks into fields in memory and files on disk, under
/// limits, leaving nothing behind on any failure.
///
/// Each file part streams to its own file in the spool folder (``Destination/folder(_:diskBudget:)``), or into a
/// ``MultipartFileStore`` (``Destination/store(_:)``). A file in the folder is created exclusively
/// (`O_EXCL | O_NOFOLLOW`), mode 0600, named `upload-` and 32 hex digits from the system's CSPRNG (never from the
/// client's filename), hashed as it is written when a ``SpoolDigest`` is given. Text fields are kept in memory under
/// ``MultipartParser/Limits/maxFieldBytes`` each and ``Limits/maxMemoryBytes`` together, and decoded per the
/// form's `_charset_` field. A form sent `application/x-www-form-urlencoded` (a browser's form without files) is
/// read into the same ``SpooledForm``, so that one route and one `Decodable` take both encodings.
///
/// ```swift
/// let spooler = MultipartSpooler(directory: "/var/spool/uploads")
/// let result = try await spooler.withSpooledForm(request.body, contentType: contentType) { form in
///     for file in form.files { print(file.filename, file.byteCount) }
///     return form.value(of: "caption")
/// }   // the spooled files are removed here, whether the closure returns or throws
/// ```
///
/// A client that disconnects mid-body, a malformed body, a limit breached, a write that fails (a full disk), a
/// cancelled task: each throws, and each file the form had spooled is removed before the error reaches the caller.
///
/// A body that arrives too slowly fails under ``Limits/bodyTimeout`` (on by default), even if it stops altogether:
/// the spool then runs in a task of its own, which the watchdog's alarm cancels when the rule breaks. A ``DiskBudget``
/// bounds the disk that all uploads of one spooler hold at once.
///
/// Files are written with blocking `write(2)` calls on the calling task, as `FileChunks` reads: meant for a local
/// disk, whose writes go to the page cache.
public struct MultipartSpooler: Sendable {
    /// Where file parts go: a folder on this machine's disk, or a store.
    public enum Destination: Sendable {
        /// Files in the folder at `path`, which must exist (the spooler creates no folders), under `diskBudget`:
        /// the disk all forms of the spooler (and of its copies) may hold at once, or nil for no such bound.
        case folder(String, diskBudget: DiskBudget?)
        /// Files in `store`: object storage, say (`StreamingMultipartS3`). ``Limits/maxDiskBytes`` then bounds the
        /// bytes stored for one form.
        case store(any MultipartFileStore)
    }

    /// Where file parts go.
    ///
    /// ```swift
    /// let spooler = MultipartSpooler(directory: "/var/spool/uploads")
    /// if case .folder(let path, let budget) = spooler.destination { print(path, budget?.bytes ?? 0) }
    /// ```
    public var destination: Destination
    /// The bounds on one form.
    public var limits: Limits
    /// How strictly the parser reads the body.
    public var mode: MultipartParser.Mode
    /// The hash computed of each file as it streams to disk, or nil for none.
    public var digest: (any SpoolDigest.Type)?
    /// Decides for each file part, from what the client says of it and its first bytes (``MultipartStoreFile``,
    /// ``MultipartStoreFile/sniffedMediaType``) and before any of its bytes is stored, whether to store it, skip it
    /// or refuse the form (``MultipartFileDecision``); nil stores every file. It sees the files inside a
    /// multipart/mixed part too.
    public var fileFilter: (@Sendable (MultipartStoreFile) -> MultipartFileDecision)?
    /// How many of a file's first bytes are read before ``fileFilter`` decides and the store begins the file
    /// (``MultipartStoreFile/firstBytes``, whose ``MultipartStoreFile/sniffedMediaType`` they give): fewer only when
    /// the file is shorter, however the body's chunks split it. 1,445 by default (what the MIME Sniffing standard
    /// reads, ``ContentType/sniffedHeaderLength``); at most ``maxFileHeadBytes`` (a larger value reads 4,096).
    /// At 0 none is read, and every file's sniffed type is an empty file's, `text/plain`.
    ///
    /// ```swift
    /// spooler.fileHeadBytes = 4096  // a filter that reads further into a format's header
    /// ```
    public var fileHeadBytes: Int = ContentType.sniffedHeaderLength
    /// The most first bytes of a file held before its filter decides: 4 KiB.
    public static let maxFileHeadBytes = 4096
    /// Where the spooler tells what it cannot throw: a stored file of a failed form that the store would not remove
    /// (a warning naming the object left behind). No-op by default.
    public var logger: Logger = .disabled
    /// The clock the body timeout reads and sleeps on: the continuous clock, or a test's.
    package var clock: any MultipartClock = .continuous
    /// The spooler's metrics (``MultipartMetrics``), made with the factory in effect when the spooler is made and
    /// shared by its copies.
    let metrics = SpoolerMetrics()

    /// A spooler that writes files into `directory`.
    public init(
        directory: String, limits: Limits = .default, mode: MultipartParser.Mode = .strict,
        digest: (any SpoolDigest.Type)? = nil, diskBudget: DiskBudget? = nil
    ) {
        self.destination = .folder(directory, diskBudget: diskBudget)
        self.limits = limits
        self.mode = mode
        self.digest = digest
    }

    /// A spooler that writes files into the folder at `directory`.
    public init(
        directory: URL, limits: Limits = .default, mode: MultipartParser.Mode = .strict,
        digest: (any SpoolDigest.Type)? = nil, diskBudget: DiskBudget? = nil
    ) {
        self.init(directory: directory.path, limits: limits, mode: mode, digest: digest, diskBudget: diskBudget)
    }

    /// A spooler that puts each file part into `store` (those under ``Limits/memoryThreshold`` stay in memory):
    /// ``Limits/maxDiskBytes`` then bounds the bytes stored for one form.
    ///
    /// On any failure of the form, the file in progress is aborted and every file the form had stored is removed
    /// from the store before the error reaches the caller. Files of a form that was read whole belong to the
    /// caller: ``SpooledForm/removeFiles()`` does not remove them from the store (``SpooledFile/storedObject``
    /// says where each is).
    public init(
        store: any MultipartFileStore, limits: Limits = .default, mode: MultipartParser.Mode = .strict,
        digest: (any SpoolDigest.Type)? = nil, logger: Logger = .disabled
    ) {
        self.destination = .store(store)
        self.limits = limits
        self.mode = mode
        self.digest = digest
        self.logger = logger
    }

    /// Where the files go: the store, or the spool folder as a store of its own.
    var fileStore: any MultipartFileStore {
        switch destination {
        case .folder(let path, let budget): SpoolFolderStore(directory: path, budget: budget)
        case .store(let store): store
        }
    }

    /// Reads the whole form. Its files stay on disk until ``SpooledForm/removeFiles()`` or until the last copy
    /// of the form (or of a ``SpooledFile``) goes away; prefer
    /// ``withSpooledForm(_:contentType:contentEncoding:isolation:_:)``, which removes them at a point you can see.
    ///
    /// - Parameters:
    ///   - body: the request body's chunks.
    ///   - contentType: the request's `Content-Type`: `multipart/form-data` with its boundary, or
    ///     `application/x-www-form-urlencoded` (a form without files, as browsers send it), whose fields are read
    ///     into the same ``SpooledForm`` under the same limits: ``MultipartParser/Limits/maxParts`` fields, each
    ///     value under ``MultipartParser/Limits/maxFieldBytes``, all of them under ``Limits/maxMemoryBytes``, and
    ///     the body under ``maxURLEncodedBodyBytes``.
    ///   - contentEncoding: the request's `Content-Encoding`: `gzip`, `x-gzip`, `deflate` or nil.
    ///   - isolation: the caller's actor, which the parse and the writes run on (no hop per chunk) when there is
    ///     no ``Limits/bodyTimeout``; with one, they run in a task of their own, which the watchdog cancels.
    /// - Throws: what ``MultipartBoundary/init(contentType:)`` and the parser throw;
    ///   ``MultipartError/Code/limitExceeded`` naming the limit; ``MultipartError/Code/invalidLimit``;
    ///   ``MultipartError/Code/writeFailed`` when a file cannot be created or written, with the ``SystemCallError``
    ///   as its cause (`ENOSPC` for a full disk); ``MultipartError/Code/insufficientStorage`` when the
    ///   folder's ``DiskBudget`` is spent; ``MultipartError/Code/timedOut`` under the ``Limits/bodyTimeout``;
    ///   ``MultipartError/Code/unsupportedCharset``; ``MultipartError/Code/fileRefused`` when the ``fileFilter``
    ///   refuses a file; ``MultipartError/Code/unsupportedContentEncoding`` for an urlencoded form sent
    ///   compressed; `CancellationError`; whatever `body` throws.
    public func spool<Body: AsyncSequence>(
        _ body: sending Body, contentType: String, contentEncoding: String? = nil,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> SpooledForm where Body.Element: MultipartChunk {
        try limits.validate()
        let watchdog = limits.bodyTimeout.map { BodyWatchdog($0, clock: clock) }
        let collecting: any FormCollecting
        if Self.isURLEncoded(contentType) {
            collecting = CollectingURLEncoded(
                spooler: self, body: body, contentEncoding: contentEncoding, watchdog: watchdog)
        } else {
            var parts = try body.multipartParts(
                contentType: contentType, contentEncoding: contentEncoding, limits: limits.parser, mode: mode)
            parts.watchdog = watchdog
            parts.received = metrics.received
            collecting = CollectingParts(spooler: self, parts: parts)
        }
        let metrics = metrics
        metrics.started.increment()
        metrics.inFlight.increment()
        let start = ContinuousClock.now
        defer {
            metrics.inFlight.decrement()
            metrics.formDuration.record(duration: .now - start)
        }
        return try await withSpan(MultipartMetrics.formSpan, ofKind: .internal, isolation: isolation) { span in
            do {
                let form = try await collect(collecting, watchdog: watchdog, isolation: isolation)
                span.attributes["multipart.files"] = form.files.count
                span.attributes["multipart.fields"] = form.fields.count
                metrics.completed.increment()
                return form
            } catch {
                if let error = error as? MultipartError { span.attributes["multipart.error.code"] = error.code.name }
                throw error
            }
        }
    }

    /// Runs `collecting` on this task, or, when there is a `watchdog`, in a task that its alarm cancels when the body
    /// breaks the rule (a body that stalls waits in a read only a cancel ends); this task waits for that one, and
    /// passes its own cancel on to it.
    private func collect(
        _ collecting: any FormCollecting, watchdog: BodyWatchdog?, isolation: isolated (any Actor)?
    ) async throws -> SpooledForm {
        guard let watchdog else { return try await collecting.collect(isolation: isolation) }
        // The body (sent here) and the parts made of it go to the reading task; this task never touches them again.
        let reading = Task {
            try await BodyWatchdog.$reading.withValue(watchdog) { try await collecting.collect(isolation: nil) }
        }
        watchdog.startAlarm { reading.cancel() }
        defer { watchdog.stopAlarm() }
        do {
            // The watchdog's timeout comes first; the spool, cancelled by it, removes its files and ends.
            return try await withTaskCancellationHandler {
                try await reading.value
            } onCancel: {
                reading.cancel()
            }
        } catch {
            throw watchdog.failure ?? error
        }
    }

    /// Collects the form's parts: fields into memory, files into the spool folder; on any failure, removes what it
    /// spooled.
    fileprivate func collect<Base>(_ parts: MultipartParts<Base>, isolation: isolated (any Actor)?) async throws
        -> SpooledForm
    {
        var collector = FormCollector(spooler: self, watchdog: parts.watchdog)
        do {
            var iterator = parts.makeAsyncIterator()
            while let part = try await iterator.next(isolation: isolation) {
                if part.head.isFile {
                    try await collector.spoolFile(part, isolation: isolation)
                } else if part.head.mixedBoundary != nil {
                    try await collector.spoolMixed(part, mode: parts.parser.mode, isolation: isolation)
                } else {
                    try await collector.collectField(part, isolation: isolation)
                }
            }
            let form = try collector.finish()
            try await collector.commit()
            return form
        } catch {
            await collector.discard()
            throw error
        }
    }

    /// Reads the whole form, hands it to `work`, and removes its files when `work` returns or throws (or the task
    /// is cancelled, which ends either). A file that `work` moves out with ``SpooledFile/move(to:)-(String)`` stays.
    ///
    /// - Returns: what `work` returns.
    /// - Throws: what ``spool(_:contentType:contentEncoding:isolation:)`` throws, and what `work` throws.
    public func withSpooledForm<Body: AsyncSequence, Result>(
        _ body: sending Body, contentType: String, contentEncoding: String? = nil,
        isolation: isolated (any Actor)? = #isolation, _ work: (SpooledForm) async throws -> Result
    ) async throws -> Result where Body.Element: MultipartChunk {
        let form = try await spool(body, contentType: contentType, contentEncoding: contentEncoding)
        defer { form.removeFiles() }
        return try await work(form)
    }
}

/// A spool's collecting, handed to the child task that runs it beside its watchdog: an existential, so that the
/// child's closure captures no generic type.
protocol FormCollecting: Sendable {
    func collect(isolation: isolated (any Actor)?) async throws -> SpooledForm
}

/// The parts of a body sent to ``MultipartSpooler/spool(_:contentType:contentEncoding:isolation:)``, moved to the child
/// task; the task that moves them never uses them again, which the compiler cannot follow into a task group.
private struct CollectingParts<Base: AsyncSequence>: FormCollecting, @unchecked Sendable
where Base.Element: MultipartChunk {
    let spooler: MultipartSpooler
    let parts: MultipartParts<Base>

    func collect(isolation: isolated (any Actor)?) async throws -> SpooledForm {
        try await spooler.collect(parts, isolation: isolation)
    }
}
