public import Foundation
import Logging
import NIOHTTP1
import StreamingMultipart

extension S3Store {
    /// Aborts the multipart uploads this store's configuration made that began more than `age` ago: what a server
    /// killed mid-upload left in the bucket (a running server aborts its own failed uploads; a killed one cannot).
    /// Call it when a server starts, with an age past the longest upload any server sharing the bucket may still
    /// be sending (its body deadline), so that no upload in progress is cut.
    ///
    /// What it may touch: only uploads whose key has the store's own shape, ``S3Store/Configuration/prefix`` and
    /// exactly 32 lower-case hex digits. Another application's upload in the same bucket is left alone even under
    /// the same prefix (`backups/db.tar` under the default prefix `""`, `upload-archive/x.bin` under `up`), and so
    /// is every upload when ``S3Store/Configuration/key`` chooses the keys: the store cannot tell those from
    /// another's, so sweep them yourself. Servers sharing the prefix share the sweep, hence the age.
    ///
    /// ```swift
    /// let aborted = try await store.abortStaleUploads(olderThan: .seconds(24 * 3600))
    /// ```
    ///
    /// It also removes, whole, each form a killed server left unfinished (its pending record older than `age`,
    /// ``commit(form:objects:)``): its open uploads, its objects, then its record.
    ///
    /// - Returns: how many uploads were aborted and unfinished forms removed.
    /// - Throws: ``S3Error`` when listing or aborting fails (an abort that finds the upload gone is not an error).
    public func abortStaleUploads(olderThan age: Duration, now: Date = Date()) async throws -> Int {
        let cutoff = now.addingTimeInterval(-Double(age.components.seconds) - Double(age.components.attoseconds) / 1e18)
        let forms = try await removeStaleForms(before: cutoff)
        let uploads = try await abortUploads(under: configuration.prefix) {
            $0.initiated < cutoff && configuration.makes(key: $0.key)
        }
        return forms + uploads
    }

    /// Removes each form whose pending record (``commit(form:objects:)``) is older than `cutoff`: its open uploads,
    /// its objects, then the record, in that order (a record is gone only once its form is). Returns how many forms.
    private func removeStaleForms(before cutoff: Date) async throws -> Int {
        let records = configuration.prefix + Configuration.pendingFolder
        var removed = 0
        for record in try await objects(under: records) where record.modified < cutoff {
            let form = record.key.dropFirst(records.count)
            guard Configuration.isName(form.utf8) else { continue }
            let folder = configuration.prefix + form + "/"
            let aborted = try await abortUploads(under: folder) { configuration.makes(key: $0.key) }
            let objects = try await objects(under: folder).filter { configuration.makes(key: $0.key) }
            for object in objects {
                _ = try await S3Retry.run(client) { try await client.send(.DELETE, key: object.key) }
            }
            _ = try await S3Retry.run(client) { try await client.send(.DELETE, key: record.key) }
            removed += 1
            logger.info(
                "removed a form a stopped server left unfinished",
                metadata: [
                    "s3.bucket": "\(configuration.bucket)", "s3.key": "\(record.key)",
                    "s3.uploads_aborted": "\(aborted)", "s3.objects_deleted": "\(objects.count)",
                ])
        }
        return removed
    }

    /// Aborts the multipart uploads under `prefix` that `isStale` picks; one found gone meanwhile is no failure.
    /// Returns how many it aborted.
    private func abortUploads(
        under prefix: String, where isStale: ((key: String, id: String, initiated: Date)) -> Bool
    ) async throws -> Int {
        var aborted = 0
        var markers: [(name: String, value: String)] = []
        while true {
            let answer = try await S3Retry.run(client) {
                try await client.send(.GET, key: nil, query: [("uploads", ""), ("prefix", prefix)] + markers)
            }
            for upload in Self.uploads(in: answer.text) where isStale(upload) {
                do {
                    _ = try await S3Retry.run(client) {
                        try await client.send(.DELETE, key: upload.key, query: [("uploadId", upload.id)])
                    }
                    aborted += 1
                    logger.info(
                        "aborted a stale multipart upload",
                        metadata: [
                            "s3.bucket": "\(configuration.bucket)", "s3.key": "\(upload.key)",
                            "s3.upload_id": "\(upload.id)",
                        ])
                } catch let error as S3Error where error.serviceCode == "NoSuchUpload" {
                    continue  // aborted or completed meanwhile
                }
            }
            guard XMLText.value(of: "IsTruncated", in: answer.text) == "true",
                let key = XMLText.value(of: "NextKeyMarker", in: answer.text),
                let id = XMLText.value(of: "NextUploadIdMarker", in: answer.text)
            else { return aborted }
            markers = [("key-marker", key), ("upload-id-marker", id)]
        }
    }

    /// The objects under `prefix` (`ListObjectsV2`, every page): each key and when it was last written.
    private func objects(under prefix: String) async throws -> [(key: String, modified: Date)] {
        var objects: [(key: String, modified: Date)] = []
        var token: [(name: String, value: String)] = []
        while true {
            let answer = try await S3Retry.run(client) {
                try await client.send(.GET, key: nil, query: [("list-type", "2"), ("prefix", prefix)] + token)
            }
            for block in XMLText.blocks("Contents", in: answer.text) {
                guard let key = XMLText.value(of: "Key", in: block),
                    let modified = XMLText.value(of: "LastModified", in: block).flatMap(Self.date)
                else { continue }
                objects.append((key, modified))
            }
            guard XMLText.value(of: "IsTruncated", in: answer.text) == "true",
                let next = XMLText.value(of: "NextContinuationToken", in: answer.text)
            else { return objects }
            token = [("continuation-token", next)]
        }
    }

    /// The uploads a `ListMultipartUploads` answer lists: key, upload id, and when each began.
    static func uploads(in text: String) -> [(key: String, id: String, initiated: Date)] {
        XMLText.blocks("Upload", in: text).compactMap { block in
            guard let key = XMLText.value(of: "Key", in: block), let id = XMLText.value(of: "UploadId", in: block),
                let initiated = XMLText.value(of: "Initiated", in: block).flatMap(date)
            else { return nil }
            return (key, id, initiated)
        }
    }

    /// An S3 timestamp (ISO 8601, with or without fractional seconds).
    static func date(_ text: String) -> Date? {
        let dates = ISO8601DateFormatter()
        dates.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return dates.date(from: text) ?? ISO8601DateFormatter().date(from: text)
    }
}
