public import AsyncHTTPClient
import Foundation
public import Logging
import Metrics
import NIOHTTP1
public import StreamingMultipart
import StreamingMultipartUploadClient

/// A `MultipartFileStore` that streams each file part into an S3 bucket (AWS, or an S3-compatible engine: Ceph's
/// radosgw, MinIO, Garage, SeaweedFS, R2) as a multipart upload: parts of ``S3Store/Configuration/partSize`` go up while
/// the client is still sending, ``S3Store/Configuration/concurrency`` at a time; a file smaller than one part goes as one
/// `PutObject`.
///
/// ```swift
/// let store = try S3Store(configuration: S3Store.Configuration(
///     endpoint: URL(string: "http://127.0.0.1:7480")!, bucket: "uploads", prefix: "forms/",
///     credentials: .default()))
/// let spooler = MultipartSpooler(store: store, digest: SHA256Digest.self)
/// let form = try await spooler.spool(request.body, contentType: contentType)
/// for file in form.files { print(file.storedObject?.key ?? "", file.digest?.hex ?? "") }
/// ```
///
/// Nothing is left behind by a form that fails: the spooler aborts the upload in progress (`AbortMultipartUpload`,
/// after its parts in flight end) and deletes the objects the form had finished, before the error reaches the
/// caller. A form is whole or gone even when the server is killed: its pending record stays until its last file
/// is in, and ``abortStaleUploads(olderThan:now:)`` at the next start removes a form whose record a killed server
/// left (``commit(form:objects:)``). A deployment should still give the bucket a lifecycle rule that aborts
/// incomplete multipart uploads after a day, in case no server starts again.
///
/// Each part carries its checksum, which S3 checks (``S3Store/Configuration/checksum``): `x-amz-checksum-sha256`
/// with the SHA-256 signed as the payload hash by default, or `x-amz-checksum-crc32c` at memory speed beside
/// `UNSIGNED-PAYLOAD` (for https endpoints); a failed part is sent again (``S3Store/Configuration/retry``) from the bytes held until S3 acknowledged it. The client's filename
/// and field name go into `x-amz-meta-filename` and `x-amz-meta-field`, and its content type as sent into
/// `x-amz-meta-content-type`, percent-encoded (any text is then safe in a header). The object's own `Content-Type`
/// is one ``S3Store/Configuration/storedContentTypes`` allows (images, media, PDF, plain text by default; never HTML
/// or SVG), checked against the type the file's first bytes show as well as the client's, else
/// `application/octet-stream` (``S3Store/Configuration/storedContentType(for:)``), and it is stored with
/// ``S3Store/Configuration/contentDisposition`` (`attachment`): a bucket served to browsers does not serve a client's
/// page.
public struct S3Store: MultipartFileStore {
    public let configuration: S3Store.Configuration
    /// Where the store tells what it cannot throw: an upload or an object that an abort could not remove (a warning
    /// naming it), and the stale uploads ``abortStaleUploads(olderThan:now:)`` aborted. No-op by default.
    public let logger: Logger
    let client: S3Client
    /// The forms in progress whose pending records this store put (``commit(form:objects:)``).
    let forms = PendingForms()

    /// - Throws: ``S3Error/Code/invalidConfiguration`` from ``S3Store/Configuration/validate()``.
    public init(
        configuration: S3Store.Configuration, httpClient: HTTPClient = .shared, logger: Logger = .disabled
    ) throws {
        try configuration.validate()
        self.configuration = configuration
        self.logger = logger
        client = S3Client(configuration: configuration, http: httpClient, logger: logger)
    }

    /// The credentials the next request signs with, fetched from ``S3Store/Configuration/credentials`` if none are
    /// kept or they are due: a server calls it at start to fail there rather than at its first upload.
    ///
    /// - Throws: ``S3Error/Code/missingCredentials`` saying which provider failed and why.
    public func credentials() async throws -> S3Credentials {
        try await client.credentials.current()
    }

    /// Starts a file's upload. What it logs of the file goes to ``logger`` with the file's logger's metadata added
    /// (the request id, when the form came through a server product).
    ///
    /// - Throws: `MultipartError.Code.invalidHeader` (the client's error, 400) for a part whose `Content-Type`
    ///   holds a control byte: it is refused before anything is sent, never retried as a failure of S3.
    public func begin(_ file: MultipartStoreFile) async throws -> any MultipartStoreWriter {
        if let type = file.contentType, type.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw MultipartError(
                code: .invalidHeader, message: "the part's Content-Type holds a control byte: \(type.debugDescription)",
                partIndex: file.partIndex)
        }
        try await recordForm(of: file)
        var logger = logger
        for (key, value) in file.logger.handler.metadata { logger[metadataKey: key] = value }
        let key = configuration.objectKey(for: file)
        let form = configuration.form(ofKey: key)
        return S3Upload(client: client, key: key, file: file, logger: logger) { [forms] in
            if let form { forms.doubt(form) }
        }
    }

    /// Deletes `object` (a file of a form that failed).
    public func remove(_ object: MultipartStoredObject) async throws {
        do {
            try await S3Retry.run(client) { _ = try await client.send(.DELETE, key: object.key) }
        } catch {
            doubt(configuration.form(ofKey: object.key))
            throw error
        }
    }
}

/// Sends a request again after a failure that another try may mend, by the configuration's ``MultipartRetry``: the
/// connection, the statuses every upload retries (408, 429, 5xx but 501 and 505), S3's `SlowDown` code, and an error
/// S3 wrote into a 200 answer (a completion that failed late, which the SDKs retry too).
enum S3Retry {
    /// Runs `work` under the store's retry policy, counting each attempt after the first
    /// (``MultipartMetrics/s3Retries``).
    ///
    /// - Throws: `work`'s error when it is not worth another try (a 403, a missing bucket: S3Error); when it was, but
    ///   the retries ran out, `MultipartError.Code.storeUnavailable` (503) with it as the cause: S3 is down or
    ///   overloaded, and the client may come back.
    static func run<Result>(
        _ client: S3Client, isolation: isolated (any Actor)? = #isolation, _ work: () async throws -> Result
    ) async throws -> Result {
        var attempts = 0
        defer { if attempts > 1 { client.metrics.retries.increment(by: attempts - 1) } }
        let isTransient = { (error: any Error) in (error as? S3Error).map(Self.isTransient) ?? false }
        do {
            return try await client.configuration.retry.run(retryingWhen: isTransient) {
                attempts += 1
                return try await work()
            }
        } catch let error as S3Error where isTransient(error) {
            throw MultipartError(
                code: .storeUnavailable, message: "S3 kept failing (\(attempts) tries): \(error)", cause: error)
        }
    }

    static func isTransient(_ error: S3Error) -> Bool {
        switch error.code {
        case .transport: true
        case .service:
            error.status.map(MultipartRetry.isTransient(status:)) == true || error.serviceCode == "SlowDown"
                || error.status == 200
        default: false
        }
    }
}
