public import Foundation
public import StreamingMultipart
@_exported public import StreamingMultipartUploadClient

extension S3Store {
    /// Where an ``S3Store`` puts files and how: the endpoint, bucket, key prefix, credentials, and the multipart
    /// upload's part size and concurrency.
    ///
    /// ```swift
    /// var configuration = try S3Store.Configuration(
    ///     endpoint: URL(string: "http://127.0.0.1:7480")!, bucket: "uploads", prefix: "forms/",
    ///     region: "us-east-1", credentials: .default())
    /// configuration.partSize = 16 << 20
    /// configuration.concurrency = 4
    /// ```
    public struct Configuration: Sendable {
        /// The checksum S3 checks each part against.
        ///
        /// ```swift
        /// configuration.checksum = .crc32c   // over https: the parts' bytes are hashed at memory speed
        /// ```
        public enum Checksum: Sendable, Hashable {
            /// `x-amz-checksum-sha256`, and the same SHA-256 signed as the request's payload hash: the signature
            /// covers the bytes. Costs a SHA-256 of every byte (about 1.6 GB/s on one core of this machine).
            case sha256
            /// `x-amz-checksum-crc32c`, on the processor's CRC instructions (about 20 GB/s), and the payload sent as
            /// `UNSIGNED-PAYLOAD`: the signature covers the headers and the checksum, not the bytes, so use it over
            /// https, where TLS keeps the bytes from being changed on the way, as the AWS SDKs do.
            case crc32c
        }

        /// How the bucket is named in a request's URL.
        public enum Addressing: Sendable, Hashable {
            /// `http://host/bucket/key`: what local S3 engines (radosgw, MinIO, moto) expect.
            case path
            /// `http://bucket.host/key`: AWS's default.
            case virtualHosted
        }

        /// The S3 endpoint: scheme, host and port (`http://127.0.0.1:7480`, `https://s3.eu-west-3.amazonaws.com`).
        public var endpoint: URL
        public var bucket: String
        /// Put before every key made without a ``key`` closure (read when the key is made, so a prefix set after
        /// `init` counts), and what ``S3Store/abortStaleUploads(olderThan:now:)`` sweeps under.
        public var prefix: String
        /// The region requests are signed for; by default ``environmentRegion(_:)`` (`AWS_REGION`, else
        /// `us-east-1`, which most local engines expect).
        public var region: String
        /// Where the keys come from, and come again before they expire: ``S3CredentialProvider/default(environment:)``
        /// for the SDKs' chain, ``S3CredentialProvider/static(_:)`` for keys in code.
        public var credentials: S3CredentialProvider
        public var addressing: Addressing
        /// The size of each part of a multipart upload, at least 5 MiB (S3's minimum for all but the last); a file
        /// smaller than one part goes as one `PutObject`. Default 8 MiB.
        public var partSize: Int
        /// Parts uploaded at once for one file. Memory for one file is at most `partSize × (concurrency + 1)` until the
        /// file passes 5,000 parts; from there the part size doubles every 1,000 parts, so that a file of unknown length
        /// never runs into S3's 10,000. Default 4.
        public var concurrency: Int
        /// The memory all uploads into S3 hold together, shared by every store given it: a part's buffer is charged to
        /// it whole when the part begins (so at most `memoryBudget ÷ partSize` files gather a part at once; the rest
        /// wait holding none of it), and an upload that finds no room waits, then fails with 503
        /// (`MultipartError.Code.serverBusy`). Default `MultipartMemoryBudget.shared` (256 MiB),
        /// one for the whole process.
        public var memoryBudget: MultipartMemoryBudget
        /// When a failed request (a part, a `PutObject`, a completion, an abort) is sent again: after a connection
        /// failure, 408, 429, a 5xx but 501 and 505, or S3's `SlowDown`, the same policy as the one-call uploads'.
        /// Default 3 retries after 200 ms, doubling, at most 20 s apart.
        public var retry: MultipartRetry
        /// How long one request may take, from its start to the end of S3's answer (a part of ``partSize`` goes in
        /// one request, so allow for it on a slow link). Default 300 s.
        public var requestTimeout: Duration
        /// The most bytes of an answer read (S3's answers are XML of a few KiB; a list of 1,000 open uploads is
        /// about 1 MiB): a larger one fails the request as a transport error. Default 16 MiB.
        public var maxAnswerBytes: Int
        /// The media types an object may be stored as (`type/subtype`, lower case), checked against what the file's
        /// first bytes show (`MultipartStoreFile.sniffedMediaType`) as well as what the client says: see
        /// ``storedContentType(for:)``. A browser that opens the object never runs what a client called `text/html`
        /// or `image/svg+xml`, nor markup it called `image/png`. The type as sent is kept in
        /// `x-amz-meta-content-type`, percent-encoded. Default ``sniffingSafeTypes``.
        public var storedContentTypes: Set<String>
        /// The `Content-Disposition` every object is stored with; `attachment` by default (a browser downloads it
        /// rather than showing it), nil for none.
        public var contentDisposition: String?
        /// The checksum each part (and a small file's one `PutObject`) carries, which S3 checks before it stores
        /// the bytes. Default ``Checksum/sha256``.
        public var checksum: Checksum
        /// The object key for a file, when a caller chooses keys; nil (the default) for ``prefix``, the form's folder
        /// and 32 hex digits from the system's CSPRNG, never the client's filename (which goes into
        /// `x-amz-meta-filename`, percent-encoded). See ``objectKey(for:)``. Files whose keys a caller chooses have no
        /// pending record (``S3Store/commit(form:objects:)``): sweep what a killed server left of them yourself.
        public var key: (@Sendable (MultipartStoreFile) -> String)?
        /// The time credentials' expirations are compared with: the system's, or a test's that moves only when it
        /// says (so that keys can expire mid-upload without the test waiting for them to).
        package var now: @Sendable () -> Date = { Date() }

        /// S3's most parts for one upload.
        static let maxParts = 10_000
        /// Parts at ``partSize`` before the part size starts doubling every 1,000 parts, so that a file of unknown
        /// length never runs into ``maxParts``.
        static let partsBeforeGrowth = 5_000

        /// - Throws: ``S3Error/Code/invalidConfiguration`` for an endpoint without a scheme and host, or an empty bucket.
        public init(
            endpoint: URL, bucket: String, prefix: String = "",
            region: String = S3Store.Configuration.environmentRegion(),
            credentials: S3CredentialProvider, addressing: Addressing = .path
        ) throws {
            try Self.validate(endpoint: endpoint, bucket: bucket)
            self.endpoint = endpoint
            self.bucket = bucket
            self.prefix = prefix
            self.region = region
            self.credentials = credentials
            self.addressing = addressing
            partSize = 8 << 20
            concurrency = 4
            retry = MultipartRetry(attempts: 3, initialDelay: .milliseconds(200), maxDelay: .seconds(20))
            requestTimeout = .seconds(300)
            maxAnswerBytes = 16 << 20
            memoryBudget = .shared
            storedContentTypes = Self.sniffingSafeTypes
            contentDisposition = "attachment"
            checksum = .sha256
            key = nil
        }

        /// The key `file` is stored under: ``key``'s, else ``prefix``, the file's form and a `/` (when it is part of
        /// a spooler's form), and 32 hex digits from the CSPRNG: `forms/9f86d081884c7d659a2feaa0c55ad015/a591a6d4…`.
        /// The files of one form share its folder, which is what the store's sweep removes of a form a killed
        /// server left unfinished (``S3Store/abortStaleUploads(olderThan:now:)``).
        public func objectKey(for file: MultipartStoreFile) -> String {
            key?(file) ?? prefix + (keepsForm(of: file) ? file.form + "/" : "") + Self.randomName()
        }

        /// Whether a file's form has a pending record (``S3Store/commit(form:objects:)``): when the store makes the
        /// keys, and the file is part of a spooler's form.
        func keepsForm(of file: MultipartStoreFile) -> Bool {
            key == nil && Self.isName(file.form.utf8[...])
        }

        /// Whether this configuration makes keys of `key`'s shape: ``prefix`` and exactly 32 lower-case hex digits,
        /// or 32 of them, a `/` and 32 more (a file of a form), nothing before or after. What
        /// ``S3Store/abortStaleUploads(olderThan:now:)`` may touch: another application's key under the same prefix
        /// (`backups/db.tar` under `""`, `upload-archive/x.bin` under `up`) never has it. Keys a ``key`` closure
        /// chose are not recognized, whatever their shape.
        func makes(key: String) -> Bool {
            guard self.key == nil, key.hasPrefix(prefix) else { return false }
            let name = key.utf8.dropFirst(prefix.utf8.count)
            if name.count == 65, name[name.index(name.startIndex, offsetBy: 32)] == UInt8(ascii: "/") {
                return Self.isName(name.prefix(32)) && Self.isName(name.suffix(32))
            }
            return Self.isName(name)
        }

        /// The form whose folder holds `key`, a key of this configuration's shape; nil for a file of none.
        func form(ofKey key: String) -> String? {
            guard makes(key: key) else { return nil }
            let name = key.utf8.dropFirst(prefix.utf8.count)
            return name.count == 65 ? String(Substring(name.prefix(32))) : nil
        }

        /// The key of `form`'s pending record: ``prefix``, `.pending/` and the form.
        func pendingKey(form: String) -> String {
            prefix + Self.pendingFolder + form
        }

        /// Where pending records are kept, under ``prefix``.
        static let pendingFolder = ".pending/"

        /// Whether `name` is exactly 32 lower-case hex digits.
        static func isName(_ name: Substring.UTF8View) -> Bool {
            name.count == 32 && name.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        }

        /// Images, audio, video, PDF, archives and plain text: types a browser shows (or saves) and never runs as a
        /// page or script. Not HTML, SVG, XML, XHTML, JavaScript or anything else that can carry script.
        public static let sniffingSafeTypes: Set<String> = [
            "image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/heic", "image/heif", "image/bmp",
            "image/tiff", "audio/mpeg", "audio/ogg", "audio/wav", "audio/webm", "audio/aac", "audio/flac", "video/mp4",
            "video/webm", "video/ogg", "video/quicktime", "application/pdf", "application/zip", "application/gzip",
            "application/octet-stream", "text/plain", "text/csv",
        ]

        /// The `Content-Type` `file` is stored with: the client's media type when both it and the type the file's
        /// first bytes show are in ``storedContentTypes``; else the sniffed type when it is; else
        /// `application/octet-stream`.
        ///
        /// ```swift
        /// // A PNG labelled image/png: "image/png". A PNG labelled text/html: "image/png".
        /// // An HTML page labelled image/png: "application/octet-stream" (text/html is not in the list).
        /// let type = configuration.storedContentType(for: file)
        /// ```
        public func storedContentType(for file: MultipartStoreFile) -> String {
            let sniffed = file.sniffedMediaType
            guard storedContentTypes.contains(sniffed) else { return "application/octet-stream" }
            guard let sent = file.mediaType, storedContentTypes.contains(sent) else { return sniffed }
            return sent
        }

        /// The region `AWS_REGION` names, else `AWS_DEFAULT_REGION` (the AWS CLI's), else `us-east-1`; an empty value
        /// counts as unset.
        ///
        /// ```swift
        /// S3Store.Configuration.environmentRegion(["AWS_REGION": "eu-west-3"])   // "eu-west-3"
        /// ```
        public static func environmentRegion(
            _ environment: [String: String] = ProcessInfo.processInfo.environment
        ) -> String {
            for name in ["AWS_REGION", "AWS_DEFAULT_REGION"] {
                if let region = environment[name], !region.isEmpty { return region }
            }
            return "us-east-1"
        }

        /// The part size of part `number` (from 1): ``partSize`` up to `partsBeforeGrowth`, then doubled every 1,000
        /// parts.
        func partSize(forPart number: Int) -> Int {
            guard number > Self.partsBeforeGrowth else { return partSize }
            return partSize << min(20, (number - Self.partsBeforeGrowth - 1) / 1_000 + 1)
        }

        /// Checks ``endpoint`` and ``bucket`` (as `init` does: they may have been set since), ``partSize`` (at least
        /// 5 MiB), ``concurrency`` (at least 1), ``requestTimeout`` (positive), ``maxAnswerBytes`` (at least 1 KiB)
        /// and ``contentDisposition`` (no control byte). ``S3Store`` calls it.
        ///
        /// - Throws: ``S3Error/Code/invalidConfiguration`` naming the setting.
        public func validate() throws {
            try Self.validate(endpoint: endpoint, bucket: bucket)
            if let disposition = contentDisposition,
                disposition.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            {
                throw S3Error(code: .invalidConfiguration, message: "contentDisposition holds a control byte")
            }
            guard partSize >= 5 << 20 else {
                throw S3Error(code: .invalidConfiguration, message: "partSize must be at least 5 MiB, got \(partSize)")
            }
            guard requestTimeout > .zero, maxAnswerBytes >= 1 << 10 else {
                throw S3Error(
                    code: .invalidConfiguration,
                    message: "requestTimeout must be positive and maxAnswerBytes at least 1 KiB, got \(requestTimeout) "
                        + "and \(maxAnswerBytes)")
            }
            guard concurrency >= 1 else {
                throw S3Error(
                    code: .invalidConfiguration, message: "concurrency must be at least 1, got \(concurrency)")
            }
        }

        /// - Throws: ``S3Error/Code/invalidConfiguration`` for an endpoint without an http(s) scheme and a host, or a
        ///   bucket name that is empty or holds a `/`.
        private static func validate(endpoint: URL, bucket: String) throws {
            guard let scheme = endpoint.scheme, scheme == "http" || scheme == "https", endpoint.host != nil else {
                throw S3Error(
                    code: .invalidConfiguration, message: "the endpoint \(endpoint) has no http(s) scheme or host")
            }
            guard !bucket.isEmpty, !bucket.contains("/") else {
                throw S3Error(
                    code: .invalidConfiguration,
                    message: "the bucket name \(bucket.debugDescription) is empty or holds a /"
                )
            }
        }

        /// 32 hex digits from the system's CSPRNG.
        static func randomName() -> String {
            var random = SystemRandomNumberGenerator()
            return (0..<2).map { _ in
                let hex = String(random.next() as UInt64, radix: 16)
                return String(repeating: "0", count: 16 - hex.count) + hex
            }.joined()
        }
    }
}
