import Foundation

/// The spooler's local folder as a ``MultipartFileStore``: the store a ``MultipartSpooler`` made with a directory
/// streams its files into, through the one path every store takes (see `FormCollector`).
///
/// Each file is created exclusively in ``directory`` (`O_EXCL | O_NOFOLLOW`, mode 0600, named `upload-` and 32 hex
/// digits from the CSPRNG, see `TemporaryFile`), written with blocking `write(2)` calls on the calling task (a local
/// disk's writes go to the page cache), and charged to the spooler's ``MultipartSpooler/DiskBudget`` as it is
/// written. A finished file is not the store's to remove: the form owns it (``SpoolFolderWriter/localFile()``, a
/// ``SpoolFileOwner``), and removes it when it ends unless it is moved out.
struct SpoolFolderStore: MultipartFileStore {
    /// The folder files are created in.
    let directory: String
    /// The disk all forms of the spooler may hold at once, or nil.
    let budget: MultipartSpooler.DiskBudget?

    /// - Throws: ``MultipartError/Code/writeFailed`` when the file cannot be created, with the ``SystemCallError``.
    func begin(_ file: MultipartStoreFile) async throws -> any MultipartStoreWriter {
        do {
            return SpoolFolderWriter(
                try TemporaryFile(inDirectory: directory, prefix: SpoolFileName.prefix), file: file, budget: budget)
        } catch {
            throw MultipartError(
                code: .writeFailed,
                message: "cannot create a file in the spool folder \(directory) for \(file.describedPart)",
                partIndex: file.partIndex, cause: error)
        }
    }

    /// Removes a finished file (its ``MultipartStoredObject/key`` is its path).
    func remove(_ object: MultipartStoredObject) async throws {
        guard unlink(object.key) == 0 || currentErrno() == ENOENT else { throw SystemCallError("unlink") }
    }
}

/// One file being written into the spool folder.
///
/// `@unchecked Sendable`: the spooler calls it from one task, one call after another (``abort()`` too, from the task
/// that cleans up after that one), never at once.
final class SpoolFolderWriter: MultipartStoreWriter, @unchecked Sendable {
    /// One `write(2)` run a MiB, hashed beside the next: the folder's calls cost more than their bytes.
    var preferredBatchBytes: Int { 1 << 20 }

    private let temporary: TemporaryFile
    private let file: MultipartStoreFile
    private let budget: MultipartSpooler.DiskBudget?
    /// The bytes taken from `budget` so far: given back by ``abort()``, or by the file's owner when it leaves.
    private var budgeted: Int64 = 0

    init(_ temporary: TemporaryFile, file: MultipartStoreFile, budget: MultipartSpooler.DiskBudget?) {
        self.temporary = temporary
        var file = file
        file.firstBytes = []  // a view of the body's first chunk, kept alive no longer than the filter needs it
        self.file = file
        self.budget = budget
    }

    /// - Throws: ``MultipartError/Code/insufficientStorage`` when the shared budget is spent;
    ///   ``MultipartError/Code/writeFailed`` with the ``SystemCallError`` (`ENOSPC` for a full disk).
    nonisolated(nonsending) func append(_ bytes: MultipartBytes) async throws {
        if let budget {
            guard budget.reserve(Int64(bytes.count)) else {
                throw MultipartError(
                    code: .insufficientStorage,
                    message: "\(file.describedPart) needs more disk than the spooler's shared budget has left "
                        + "(\(budget.usedBytes) of \(budget.bytes) bytes held by uploads in progress)",
                    partIndex: file.partIndex)
            }
            budgeted += Int64(bytes.count)
        }
        do {
            try bytes.withSpan { try temporary.file.write($0) }
        } catch {
            throw MultipartError(
                code: .writeFailed, message: "writing \(file.describedPart) to \(temporary.path) failed",
                partIndex: file.partIndex, cause: error)
        }
    }

    func finish(byteCount: Int64, digest: SpooledFile.Digest?) async throws -> MultipartStoredObject {
        MultipartStoredObject(key: temporary.path, location: temporary.path)
    }

    func abort() async {
        temporary.discard()
        budget?.release(budgeted)
        budgeted = 0
    }

    /// The finished file's one owner, which closes it now and holds its share of the budget from here on.
    func localFile() -> (any MultipartLocalFile)? {
        defer { budgeted = 0 }
        return SpoolFileOwner(temporary, budget: budget, budgeted: budgeted)
    }
}

extension MultipartStoreFile {
    /// The part, as errors name it: `part 2 ("photo")`.
    var describedPart: String { "part \(partIndex + 1) (\"\(name)\")" }
}
