public import Logging

/// Where a ``MultipartSpooler`` puts file parts other than its local folder: object storage, a database, another
/// service. The spooler begins a file when a part outgrows ``MultipartSpooler/Limits/memoryThreshold`` (at once by
/// default), appends its bytes as they arrive, and finishes it at the part's end; on any failure of the form it
/// aborts the file in progress and removes every file the form had finished, before the error reaches the caller.
///
/// ```swift
/// struct BlobStore: MultipartFileStore {
///     func begin(_ file: MultipartStoreFile) async throws -> any MultipartStoreWriter {
///         try await BlobUpload(name: UUID().uuidString, contentType: file.contentType)
///     }
///     func remove(_ object: MultipartStoredObject) async throws { try await deleteBlob(object.key) }
/// }
/// let spooler = MultipartSpooler(store: BlobStore())
/// ```
///
/// The spooler calls ``MultipartStoreWriter/abort()`` and ``remove(_:)`` outside the caller's task, so that a
/// cancelled request still cleans up; they should not throw away a failure silently: an object left behind is
/// the store's to log. The file's digest is computed by the spooler, as for the local folder.
public protocol MultipartFileStore: Sendable {
    /// Begins a file for a part: `file` is what the client said of it, and its first bytes. Never use the client's
    /// filename as the object's name. Those first bytes are a view of the body's first chunk: a writer that keeps
    /// `file` for the upload's length keeps only what it needs of it (or empties ``MultipartStoreFile/firstBytes``
    /// of its copy), not that chunk.
    func begin(_ file: MultipartStoreFile) async throws -> any MultipartStoreWriter

    /// Removes a finished file of a form that failed.
    func remove(_ object: MultipartStoredObject) async throws

    /// Makes a finished form's files the caller's for good: `objects` are the form's files in this store
    /// (``MultipartStoreFile/form`` is `form`), all finished. Called once, after the form's last part and before the
    /// spooler returns it; when it throws, the form fails, and its files are removed as for any failure.
    ///
    /// A store that records a form in progress, so that a sweep can remove what a killed process left of it (S3's
    /// pending record), ends that record here: until then the form's files are not yet the caller's. No-op by
    /// default.
    ///
    /// ```swift
    /// func commit(form: String, objects: [MultipartStoredObject]) async throws {
    ///     try await deleteBlob("pending/" + form)
    /// }
    /// ```
    func commit(form: String, objects: [MultipartStoredObject]) async throws

    /// Ends a form that failed, once its file in progress was aborted and its finished files removed: a store that
    /// recorded the form as in progress removes the record, or keeps it for its sweep when it cannot be sure that
    /// nothing is left (a request whose answer never came may still land). Called outside the caller's task, like
    /// ``remove(_:)``. No-op by default.
    func discard(form: String) async
}

extension MultipartFileStore {
    /// Nothing to end: the files were the caller's when they finished.
    public func commit(form: String, objects: [MultipartStoredObject]) async throws {}

    /// Nothing to end.
    public func discard(form: String) async {}
}

/// One file on its way into a ``MultipartFileStore``.
public protocol MultipartStoreWriter: Sendable {
    /// Takes the file's next bytes, returning once the store can take more: the spooler reads no further until
    /// then, so that a slow store slows the client rather than filling memory.
    ///
    /// The bytes are where the body's chunks put them: a slice of an array, or a region of a `ByteBuffer` the body
    /// lent (``MultipartBytes``), not copied on the way. Read them with ``MultipartBytes/withSpan(_:)``, or keep them
    /// (they keep their storage).
    ///
    /// Called on the spooler's executor, once per slice of a batch of about 1 MiB. A writer declared
    /// `nonisolated(nonsending)` runs there, with no hop (the spool folder's does: its `write(2)` into the page cache
    /// takes microseconds); a plain `async` one runs on the global executor, and an actor's on the actor.
    nonisolated(nonsending) func append(_ bytes: MultipartBytes) async throws

    /// Ends the file: every byte was appended (`byteCount` in all; `digest` when the spooler has a
    /// ``SpoolDigest``). Returns the finished object.
    func finish(byteCount: Int64, digest: SpooledFile.Digest?) async throws -> MultipartStoredObject

    /// Gives the file up and removes what it wrote. Called once, instead of ``finish(byteCount:digest:)`` or when
    /// it failed.
    func abort() async

    /// The bytes the spooler gathers before each ``append(_:)``: 0 (the default) hands each chunk on as it comes.
    /// A store that gathers bytes itself (S3's parts) keeps 0, since it counts what it holds against its own memory
    /// budget, and a batch the spooler held for it would be memory no budget sees (50 slow uploads, 50 MiB). A store
    /// whose calls cost more than the bytes (a `write(2)` each) asks for more: the spool folder asks for 1 MiB, one
    /// `write(2)` run a MiB. The spooler gathers at most 256 slices, and at most 8 MiB, whatever the size asked.
    ///
    /// ```swift
    /// var preferredBatchBytes: Int { 1 << 20 }
    /// ```
    var preferredBatchBytes: Int { get }

    /// Who owns the finished file, asked once ``finish(byteCount:digest:)`` has returned: nil (the default) leaves
    /// it to the caller as the ``MultipartStoredObject`` that `finish` returned (``SpooledFile/storedObject``), which
    /// the form removes from the store only when it fails. A store that writes to this machine's disk may instead
    /// give the form the file, as the spool folder does: a ``MultipartLocalFile``, which the form reads, moves out
    /// and removes as a spooled file on disk.
    ///
    /// ```swift
    /// func localFile() -> (any MultipartLocalFile)? { ScratchFile(path: path) }
    /// ```
    func localFile() -> (any MultipartLocalFile)?
}

extension MultipartStoreWriter {
    /// Each chunk as it comes.
    public var preferredBatchBytes: Int { 0 }

    /// None: the finished file is the caller's, where the store put it.
    public func localFile() -> (any MultipartLocalFile)? { nil }
}

/// A file part as it begins, for a ``MultipartSpooler/fileFilter`` to decide on and a ``MultipartFileStore`` to
/// begin it with: what the client said of it (``name``, ``filename``, ``contentType``: claims, any text), and its
/// first bytes with the type they show (``firstBytes``, ``sniffedMediaType``: what the file is, whatever it says).
///
/// ```swift
/// spooler.fileFilter = { file in
///     switch file.sniffedMediaType {
///     case "image/png", "image/jpeg", "image/gif", "image/webp": .store
///     default: .refuse(status: 415, message: "only PNG, JPEG, GIF and WebP images are taken")
///     }
/// }
/// ```
public struct MultipartStoreFile: Sendable, Hashable {
    /// The part's field name, as the client sent it.
    public var name: String
    /// The filename as the client sent it (``ContentDisposition/preferredFilename``): any text, never a safe name.
    public var filename: String
    /// The part's `Content-Type` value as the client sent it, or nil: any case, any parameters, any claim. Decide
    /// by ``sniffedMediaType``, or at least by ``mediaType``.
    public var contentType: String?
    /// The type the client claims, as a browser reads ``contentType``: `type/subtype` in lower case, without
    /// parameters (``ContentType/mediaType(of:)``), so that `image/SVG+XML; charset=utf-8` and `image/svg+xml;` are
    /// `image/svg+xml`; nil when the part has no `Content-Type` or none of that shape.
    public var mediaType: String? { contentType.flatMap(ContentType.mediaType(of:)) }
    /// The file's first bytes: ``MultipartSpooler/fileHeadBytes`` of them (1,445 by default), fewer only when the
    /// file is shorter. A copy, made when read: ``sniffedMediaType`` reads them where they are.
    public var firstBytes: [UInt8] {
        get { Array(head.arraySlice) }
        set { head = MultipartBytes(newValue[...]) }
    }
    /// ``firstBytes`` where the body's first chunk put them when it held them all (the usual case): a view, not a
    /// copy. A store that keeps the file past its `begin` would keep that chunk's storage too
    /// (``MultipartFileStore/begin(_:)``).
    var head: MultipartBytes
    /// The type ``firstBytes`` show, by the MIME Sniffing standard's rules for an unknown type
    /// (``ContentType/sniffedMediaType(of:)``): `image/png` for a PNG whatever its name and label, `text/html` or
    /// `image/svg+xml` for markup labelled `image/png`. What a filter that takes only some kinds of file compares.
    /// Sniffed when read (a file no filter or store asks about costs no sniffing): read it once.
    public var sniffedMediaType: String { head.withSpan { ContentType.sniffedMediaType(of: $0) } }
    /// The part's index in the body.
    public var partIndex: Int
    /// The form the file is part of: 32 hex digits from the system's CSPRNG, the same for every file a spooler
    /// stores of one form (made when its first file begins), what ``MultipartFileStore/commit(form:objects:)`` and
    /// ``MultipartFileStore/discard(form:)`` name; empty for a file begun outside a spooler's form, and for a file
    /// into the spooler's own folder. Not part of the file's equality.
    public var form = ""
    /// The logger of the form the file is part of (the spooler's: the request's, through a server product's
    /// `request.multipartForm`), whose metadata (the request id) a store puts on what it logs of this file. Not part
    /// of the file's equality.
    public var logger: Logger

    public init(
        name: String, filename: String, contentType: String?, partIndex: Int, firstBytes: [UInt8] = [],
        logger: Logger = Logger(label: "StreamingMultipart", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.init(
            name: name, filename: filename, contentType: contentType, partIndex: partIndex,
            head: MultipartBytes(firstBytes[...]), logger: logger)
    }

    /// A file whose first bytes are `head`, as they came.
    init(name: String, filename: String, contentType: String?, partIndex: Int, head: MultipartBytes, logger: Logger) {
        self.name = name
        self.filename = filename
        self.contentType = contentType
        self.partIndex = partIndex
        self.head = head
        self.logger = logger
    }

    /// Equal when all but ``logger`` and ``form`` are.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.name == rhs.name && lhs.filename == rhs.filename && lhs.contentType == rhs.contentType
            && lhs.partIndex == rhs.partIndex && lhs.firstBytes == rhs.firstBytes
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(filename)
        hasher.combine(contentType)
        hasher.combine(partIndex)
        hasher.combine(firstBytes)
    }
}

/// A file a ``MultipartFileStore`` holds.
public struct MultipartStoredObject: Sendable, Hashable {
    /// The store's name for the file (an object key).
    public var key: String
    /// Where it is, for people and logs: `s3://bucket/key`, say.
    public var location: String
    /// What else the store says of it (an ETag, a version id).
    public var attributes: [String: String]

    public init(key: String, location: String, attributes: [String: String] = [:]) {
        self.key = key
        self.location = location
        self.attributes = attributes
    }
}
