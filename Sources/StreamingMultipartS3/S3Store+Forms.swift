import Logging
import NIOConcurrencyHelpers
import NIOHTTP1
public import StreamingMultipart

/// A form's pending record: how a form stays all or nothing in the bucket when the server dies mid-form.
///
/// Before a form's first file goes up, the store puts an empty object at ``S3Store/Configuration/prefix``
/// `.pending/<form>`; the form's files go under `<prefix><form>/`. When the form is whole, ``commit(form:objects:)``
/// deletes the record: from then on the files are the caller's. A process killed before that (or a failed form whose
/// cleanup was not sure: a request whose answer never came may still land at S3) leaves the record, and the next
/// ``abortStaleUploads(olderThan:now:)`` removes the whole form: its open uploads, its objects, then the record. A form
/// is therefore in the bucket whole, or, once a sweep has run past its age, not at all; never in part.
///
/// Costs: one `PutObject` of no bytes and one `DeleteObject` a form. Files whose keys a
/// ``S3Store/Configuration/key`` closure chooses have no record (the store cannot tell which are a form's).
extension S3Store {
    /// Ends the form's pending record: its files are the caller's from now on. A form of no file in the store, or
    /// of files whose keys a ``S3Store/Configuration/key`` closure chose, has none.
    ///
    /// - Throws: `MultipartError.Code.storeUnavailable` when S3 kept failing (the form then fails, and its files
    ///   are removed), or the ``S3Error`` it answered.
    public func commit(form: String, objects: [MultipartStoredObject]) async throws {
        guard forms.isPending(form) else { return }
        let key = configuration.pendingKey(form: form)
        try await S3Retry.run(client) { _ = try await client.send(.DELETE, key: key) }
        _ = forms.end(form)
    }

    /// Ends the pending record of a form that failed, once its files were aborted and removed; keeps it for the
    /// sweep when something of the form may still be at S3 (a request whose answer never came, a removal that
    /// failed), and logs so. Kept means put again: a commit whose deletion of the record took effect unanswered may
    /// have removed it.
    public func discard(form: String) async {
        guard let doubtful = forms.end(form) else { return }
        let key = configuration.pendingKey(form: form)
        let metadata: Logger.Metadata = [
            "s3.bucket": "\(configuration.bucket)", "s3.key": "\(key)",
            "s3.folder": "\(configuration.prefix)\(form)/",
        ]
        guard !doubtful else {
            do {
                try await S3Retry.run(client) { _ = try await client.send(.PUT, key: key) }
                logger.info(
                    "a failed form's pending record was kept for the sweep: S3 may hold some of it", metadata: metadata)
            } catch {
                logger.error(
                    "a failed form may have left objects in its folder, and its pending record could not be put",
                    error: error, metadata: metadata)
            }
            return
        }
        do {
            try await S3Retry.run(client) { _ = try await client.send(.DELETE, key: key) }
        } catch {
            logger.warning("a failed form's pending record was left for the sweep", error: error, metadata: metadata)
        }
    }

    /// Puts the pending record of `file`'s form before its first file begins.
    func recordForm(of file: MultipartStoreFile) async throws {
        guard configuration.keepsForm(of: file), forms.begin(file.form) else { return }
        let key = configuration.pendingKey(form: file.form)
        // Kept in the ledger even when the put fails: the form's failure then deletes what may have been put.
        try await S3Retry.run(client) { _ = try await client.send(.PUT, key: key) }
    }

    /// Marks `form` as one whose failure may have left something at S3 (nothing for a file of no form).
    func doubt(_ form: String?) {
        if let form { forms.doubt(form) }
    }
}

/// The forms in progress whose pending records a store put, and for each whether its cleanup, should it fail, may
/// have left something behind (then its record stays for the sweep). An entry lives from the form's first file to
/// its commit or discard.
final class PendingForms: Sendable {
    private let doubtful = NIOLockedValueBox<[String: Bool]>([:])

    /// Enters `form`; false when it already is (its record was put).
    func begin(_ form: String) -> Bool {
        doubtful.withLockedValue { forms in
            guard forms[form] == nil else { return false }
            forms[form] = false
            return true
        }
    }

    func isPending(_ form: String) -> Bool { doubtful.withLockedValue { $0[form] != nil } }

    func doubt(_ form: String) { doubtful.withLockedValue { if $0[form] != nil { $0[form] = true } } }

    /// Removes `form`: whether it was doubtful, or nil when it was not pending.
    func end(_ form: String) -> Bool? { doubtful.withLockedValue { $0.removeValue(forKey: form) } }
}
