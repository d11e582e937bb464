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
    /// - Returns: how many uploads were aborted.
    /// - Throws: ``S3Error`` when listing or aborting fails (an abort that finds the upload gone is not an error).
    public func abortStaleUploads(olderThan age: Duration, now: Date = Date()) async throws -> Int {
        let cutoff = now.addingTimeInterval(-Double(age.components.seconds) - Double(age.components.attoseconds) / 1e18)
        var aborted = 0
        var markers: [(name: String, value: String)] = []
        while true {
            let answer = try await S3Retry.run(client) {
                try await client.send(
                    .GET, key: nil, query: [("uploads", ""), ("prefix", configuration.prefix)] + markers)
            }
            for upload in Self.uploads(in: answer.text)
            where upload.initiated < cutoff && configuration.makes(key: upload.key) {
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

    /// The uploads a `ListMultipartUploads` answer lists: key, upload id, and when each began.
    static func uploads(in text: String) -> [(key: String, id: String, initiated: Date)] {
        let dates = ISO8601DateFormatter()
        dates.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let plainDates = ISO8601DateFormatter()
        var uploads: [(key: String, id: String, initiated: Date)] = []
        var rest = text[...]
        while let start = rest.range(of: "<Upload>"),
            let end = rest.range(of: "</Upload>", range: start.upperBound..<rest.endIndex)
        {
            let block = String(rest[start.upperBound..<end.lowerBound])
            rest = rest[end.upperBound...]
            guard let key = XMLText.value(of: "Key", in: block), let id = XMLText.value(of: "UploadId", in: block),
                let when = XMLText.value(of: "Initiated", in: block),
                let initiated = dates.date(from: when) ?? plainDates.date(from: when)
            else { continue }
            uploads.append((key, id, initiated))
        }
        return uploads
    }
}
