import Crypto
import Foundation
import Logging
import Metrics
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import StreamingMultipart
import Tracing

/// One file on its way into S3: bytes gathered into parts, parts uploaded while more arrive (at most
/// ``S3Store/Configuration/concurrency`` at once, each held until S3 acknowledges it), then completed; or, for a file
/// smaller than one part, one `PutObject` at the end.
///
/// Its ``State``: nothing sent → a multipart upload open at the first full part → stored (completed, or put whole)
/// or ended (aborted). Memory: the part being gathered and the parts in flight, `partSize × (concurrency + 1)`: each
/// part is one ``PartBuffer``, filled from the chunks (their one copy) and sent in small copies, and charged whole to
/// ``S3Store/Configuration/memoryBudget`` when it begins, so that all uploads together stay within it and no upload
/// waits for room while holding a part it has only partly paid for (which let 50 slow uploads each hold 1 MiB of a
/// 48 MiB budget, none able to finish a part, until all failed).
actor S3Upload: MultipartStoreWriter {
    /// A part S3 acknowledged.
    struct Part: Sendable {
        var number: Int
        var etag: String
        var checksum: String
    }

    /// The parts of a file in progress.
    struct Parts {
        /// The next part, filling; nil before its first byte.
        var gathered: PartBuffer?
        /// The number the next part is sent as.
        var next = 1
        /// The parts in flight, oldest first, and their buffers.
        var inFlight: [(task: Task<Part, any Error>, buffer: PartBuffer)] = []
        /// Buffers of parts S3 acknowledged, emptied for the next parts: a file's parts reuse `concurrency + 1`
        /// buffers rather than mapping one each.
        var spare: [PartBuffer] = []
        /// The parts S3 acknowledged.
        var acknowledged: [Part] = []
    }

    /// Where the file is at S3; each state carries its data.
    enum State {
        /// Nothing sent yet: the first part filling. → `open` when it fills; → `stored` by a `PutObject` at
        /// `finish`; → `ended` by `abort`.
        case unsent(Parts)
        /// A multipart upload open at S3, its parts going up. → `stored` at its completion; → `ended` by `abort`
        /// (which aborts it at S3).
        case open(uploadID: String, Parts)
        /// A `PutObject` or the completion (of the upload `uploadID`) was sent, and no answer said it took: S3 may
        /// have stored the object and the answer been lost on the way. → `stored` when an answer says so; → `ended`
        /// by `abort`, which aborts the upload (if it is still open) and deletes the key (if it was stored).
        case maybeStored(uploadID: String?)
        /// The object is in the bucket: `abort` (a later failure of the form) deletes it, → `ended`.
        case stored
        /// Aborted: nothing at S3 left to answer for.
        case ended

        /// The parts in progress, nil once the file is stored or ended.
        var parts: Parts? {
            switch self {
            case .unsent(let parts), .open(_, let parts): parts
            case .maybeStored, .stored, .ended: nil
            }
        }
    }

    let client: S3Client
    let key: String
    /// The headers that describe the object, made from the file when the upload begins: the upload keeps nothing
    /// else of it (its first bytes are a view of the body's first chunk, not to be held for the upload's length).
    let objectHeaders: [(name: String, value: String)]
    let logger: Logger
    /// Tells the store that this file's cleanup may have left something at S3 (its form's record then stays for
    /// the sweep).
    let doubt: @Sendable () -> Void
    private var configuration: S3Store.Configuration { client.configuration }
    private var state = State.unsent(Parts())
    /// Whether a `PutObject` or completion of this file went unanswered (``storing(_:)``).
    private var unanswered = false

    init(
        client: S3Client, key: String, file: MultipartStoreFile, logger: Logger,
        doubt: @escaping @Sendable () -> Void
    ) {
        self.client = client
        self.key = key
        objectHeaders = Self.objectHeaders(for: file, client.configuration)
        self.logger = logger
        self.doubt = doubt
    }

    /// Runs `change` on the parts in progress, moved out of the state while it runs (so that no copy of the
    /// arrays is made), and returns what it returns.
    ///
    /// - Throws: `MultipartError.Code.invalidState` once the file is stored or ended.
    private func withParts<Result>(_ change: (inout Parts) throws -> Result) throws -> Result {
        switch state {
        case .unsent(var parts):
            state = .ended
            defer { state = .unsent(parts) }
            return try change(&parts)
        case .open(let id, var parts):
            state = .ended
            defer { state = .open(uploadID: id, parts) }
            return try change(&parts)
        case .maybeStored, .stored, .ended:
            throw MultipartError(
                code: .invalidState, message: "the upload of \(key) was used after it was finished or aborted")
        }
    }

    func append(_ bytes: MultipartBytes) async throws {
        var offset = 0
        while offset < bytes.count {
            let (part, size) = try withParts { parts in
                let size = configuration.partSize(forPart: parts.next)
                let part =
                    parts.gathered ?? Self.buffer(for: size, from: &parts.spare, budget: configuration.memoryBudget)
                parts.gathered = part
                return (part, size)
            }
            if part.charged < size { try await charge(part, toHold: size) }
            offset += bytes.withSpan { part.append($0.extracting(offset...), upTo: size) }
            if part.count == size {
                try withParts { $0.gathered = nil }
                try await upload(part)
            }
        }
    }

    func finish(byteCount: Int64, digest: SpooledFile.Digest?) async throws -> MultipartStoredObject {
        switch state {
        case .unsent(let parts):
            return try await put(parts.gathered)
        case .open(let uploadID, _):
            return try await complete(uploadID)
        case .maybeStored, .stored, .ended:
            throw MultipartError(code: .invalidState, message: "the upload of \(key) was finished twice")
        }
    }

    /// Sends a file smaller than one part as one `PutObject`.
    private func put(_ gathered: PartBuffer?) async throws -> MultipartStoredObject {
        let lease = gathered.map(PartLease.init)
        defer { lease?.end() }
        let body: S3Client.Body = lease.map { .part($0) } ?? .empty
        let checksum = configuration.checksum
        let sum = checksum.of(gathered)
        try withParts { $0.gathered = nil }
        state = .maybeStored(uploadID: nil)
        let answer = try await S3Retry.run(client) {
            try await storing {
                try await client.send(
                    .PUT, key: key, headers: objectHeaders + checksum.headers(sum.value), body: body,
                    payloadHash: sum.payloadHash)
            }
        }
        state = .stored
        client.metrics.stored.increment(by: lease?.count ?? 0)
        return object(etag: answer.headers.first(name: "ETag"))
    }

    /// Sends the last part, waits for every part, and completes the multipart upload.
    private func complete(_ uploadID: String) async throws -> MultipartStoredObject {
        if let last = try withParts({ parts in parts.gathered.take() }), last.count > 0 {
            try await upload(last)
        }
        while try withParts({ !$0.inFlight.isEmpty }) { try await collectOldest() }
        let acknowledged = try withParts { $0.acknowledged.sorted { $0.number < $1.number } }
        let element = "Checksum" + configuration.checksum.algorithmName
        let list = acknowledged.map {
            "<Part><PartNumber>\($0.number)</PartNumber><ETag>\(XMLText.escaped($0.etag))</ETag>"
                + "<\(element)>\($0.checksum)</\(element)></Part>"
        }
        let body = S3Client.Body.bytes(
            ByteBuffer(
                string: "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                    + list.joined() + "</CompleteMultipartUpload>"))
        state = .maybeStored(uploadID: uploadID)
        let answer = try await S3Retry.run(client) {
            let answer = try await storing {
                try await client.send(.POST, key: key, query: [("uploadId", uploadID)], body: body)
            }
            // S3 may answer 200 and still fail the completion: the error is then in the body, and the upload is
            // still open, to be completed again (S3Retry retries it, as the SDKs do) or aborted by abort().
            guard !answer.text.contains("<Error>") else {
                throw S3Client.error(answer, method: .POST, url: client.location(of: key).url)
            }
            return answer
        }
        state = .stored
        var etag = XMLText.value(of: "ETag", in: answer.text)
        if etag?.isEmpty ?? true {
            // radosgw 16 answers an empty ETag here; HEAD has the right one.
            etag = try? await client.send(.HEAD, key: key).headers.first(name: "ETag")
        }
        return object(etag: etag)
    }

    /// Sends a `PutObject` or a completion: one whose answer never came (the connection failed, the task was
    /// cancelled) may be under way at S3 still, and store the object after the form's cleanup deleted it.
    private func storing<Result>(_ request: () async throws -> Result) async throws -> Result {
        do {
            return try await request()
        } catch let error as S3Error where error.code == .service {
            throw error  // S3 answered: it did not store the object
        } catch {
            unanswered = true
            throw error
        }
    }

    func abort() async {
        let was = state
        state = .ended
        if let parts = was.parts {
            for part in parts.inFlight { part.task.cancel() }
            for part in parts.inFlight { _ = try? await part.task.value }  // each ends cancelled or failed
        }
        switch was {
        case .open(let uploadID, _):
            await abortUpload(uploadID)
        case .maybeStored(let uploadID):
            // A try whose answer never came may still be under way at S3, and land after the delete.
            if unanswered { doubt() }
            if let uploadID { await abortUpload(uploadID) }
            await deleteObject()
        case .stored:
            await deleteObject()
        case .unsent, .ended:
            break
        }
    }

    /// Aborts the multipart upload `uploadID`; one S3 no longer knows of (completed by a try whose answer was lost)
    /// is no failure.
    private func abortUpload(_ uploadID: String) async {
        do {
            _ = try await S3Retry.run(client) {
                try await client.send(.DELETE, key: key, query: [("uploadId", uploadID)])
            }
        } catch let error as S3Error where error.serviceCode == "NoSuchUpload" {
            return
        } catch {
            // Left open, its parts cost storage until a lifecycle rule or abortStaleUploads ends it.
            doubt()
            logger.warning(
                "a multipart upload of a failed file was left open", error: error,
                metadata: [
                    "s3.bucket": "\(configuration.bucket)", "s3.key": "\(key)", "s3.upload_id": "\(uploadID)",
                ])
        }
    }

    /// Deletes the file's object (S3 answers 204 for a key it does not hold).
    private func deleteObject() async {
        do {
            _ = try await S3Retry.run(client) { try await client.send(.DELETE, key: key) }
        } catch {
            doubt()
            logger.warning(
                "an object of a failed file was left in the bucket", error: error,
                metadata: ["s3.bucket": "\(configuration.bucket)", "s3.key": "\(key)"])
        }
    }

    /// Starts uploading `bytes` as the next part, opening the multipart upload first if need be; waits first
    /// while ``S3Store/Configuration/concurrency`` parts are in flight.
    private func upload(_ bytes: PartBuffer) async throws {
        if case .unsent(let parts) = state {
            let answer = try await S3Retry.run(client) {
                try await client.send(
                    .POST, key: key, query: [("uploads", "")],
                    headers: objectHeaders + [("x-amz-checksum-algorithm", configuration.checksum.algorithmName)])
            }
            guard let id = XMLText.value(of: "UploadId", in: answer.text), !id.isEmpty else {
                throw S3Error(
                    code: .service, message: "CreateMultipartUpload for \(key) answered no UploadId",
                    status: answer.status, requestID: answer.headers.first(name: "x-amz-request-id"))
            }
            state = .open(uploadID: id, parts)
        }
        guard case .open(let uploadID, _) = state else {
            throw MultipartError(code: .invalidState, message: "the upload of \(key) is not open")
        }
        while try withParts({ $0.inFlight.count >= configuration.concurrency }) { try await collectOldest() }
        try withParts { parts in
            let number = parts.next
            parts.next += 1
            let task = Self.uploadTask(
                PartLease(bytes), number: number, uploadID: uploadID, key: key, client: client,
                tracer: InstrumentationSystem.tracer, span: InstrumentationContext.current)
            parts.inFlight.append((task, bytes))
        }
    }

    /// Waits for the oldest part in flight; keeps its buffer for a later part unless something still holds it (an
    /// HTTP request that answered before it finished reading its body).
    private func collectOldest() async throws {
        var (task, buffer) = try withParts { $0.inFlight.removeFirst() }
        let part = try await task.value
        let reusable = isKnownUniquelyReferenced(&buffer)
        try withParts { parts in
            parts.acknowledged.append(part)
            if reusable {
                buffer.removeAll()
                parts.spare.append(buffer)
            }
        }
    }

    /// An empty buffer for a part of `size` bytes: a spare one when it is large enough, else a new mapping.
    private static func buffer(
        for size: Int, from spare: inout [PartBuffer], budget: MultipartMemoryBudget
    ) -> PartBuffer {
        while let candidate = spare.popLast() {
            if candidate.capacity >= size { return candidate }
        }
        return PartBuffer(capacity: size, budget: budget)
    }

    /// Charges `part` to the memory budget for holding `count` bytes, all at once before its first byte. When the
    /// budget has no room now, this upload first gives back all it holds (it waits for its parts in flight and drops
    /// its spare buffers), so that a waiting upload holds nothing of the budget: no set of waiters can hold it all
    /// between them and starve each other.
    ///
    /// - Throws: `MultipartError.Code.serverBusy` when the budget has no room within its wait.
    private func charge(_ part: PartBuffer, toHold count: Int) async throws {
        let step = min(part.capacity, count) - part.charged
        guard step > 0 else { return }
        let budget = configuration.memoryBudget
        if !budget.tryReserve(step) {
            while try withParts({ !$0.inFlight.isEmpty }) { try await collectOldest() }
            try withParts { $0.spare = [] }
            try await budget.reserve(step)
        }
        part.charged += step
    }

    /// A task that uploads part `number`, sending it again after a transient failure, off the upload's actor (the
    /// part's checksum is computed there too); the part is lent to its requests until S3 answers. Its span
    /// (``MultipartMetrics/s3PartSpan``) goes to `tracer` (the caller's, which a detached task would not see) as a
    /// child of `span`'s, the file's.
    private static func uploadTask(
        _ lease: PartLease, number: Int, uploadID: String, key: String, client: S3Client, tracer: any Tracer,
        span context: InstrumentationContext?
    ) -> Task<Part, any Error> {
        Task.detached {
            defer { lease.end() }
            let start = ContinuousClock.now
            defer { client.metrics.partDuration.record(duration: .now - start) }
            return try await withTracer(tracer) {
                try await partSpan(lease, number: number, uploadID: uploadID, key: key, client: client, context)
            }
        }
    }

    /// Uploads part `number` inside its span.
    private static func partSpan(
        _ lease: PartLease, number: Int, uploadID: String, key: String, client: S3Client,
        _ context: InstrumentationContext?
    ) async throws -> Part {
        try await withSpan(MultipartMetrics.s3PartSpan, context: context ?? .topLevel, ofKind: .client) {
            span in
            span.attributes["s3.part_number"] = number
            span.attributes["multipart.bytes"] = lease.count
            let checksum = client.configuration.checksum
            guard let sum = lease.part.map({ checksum.of($0) }) else { throw CancellationError() }
            let answer = try await S3Retry.run(client) {
                try await client.send(
                    .PUT, key: key, query: [("partNumber", String(number)), ("uploadId", uploadID)],
                    headers: checksum.headers(sum.value), body: .part(lease), payloadHash: sum.payloadHash)
            }
            client.metrics.stored.increment(by: lease.count)
            return Part(number: number, etag: answer.headers.first(name: "ETag") ?? "", checksum: sum.value)
        }
    }

    /// The headers that describe the object: the type it is stored as (from the allow-list) and its disposition,
    /// and the client's type, filename and field name as metadata, percent-encoded (any text is then safe in a
    /// header).
    private static func objectHeaders(
        for file: MultipartStoreFile, _ configuration: S3Store.Configuration
    ) -> [(name: String, value: String)] {
        var headers = [
            ("Content-Type", configuration.storedContentType(for: file)),
            ("x-amz-meta-filename", SigV4Signer.encode(file.filename, keepingSlash: false)),
            ("x-amz-meta-field", SigV4Signer.encode(file.name, keepingSlash: false)),
        ]
        if let sent = file.contentType {
            headers.append(("x-amz-meta-content-type", SigV4Signer.encode(sent, keepingSlash: false)))
        }
        if let disposition = configuration.contentDisposition { headers.append(("Content-Disposition", disposition)) }
        return headers
    }

    private func object(etag: String?) -> MultipartStoredObject {
        var attributes: [String: String] = ["bucket": configuration.bucket]
        if let etag, !etag.isEmpty { attributes["etag"] = etag }
        return MultipartStoredObject(
            key: key, location: "s3://\(configuration.bucket)/\(key)", attributes: attributes)
    }
}
