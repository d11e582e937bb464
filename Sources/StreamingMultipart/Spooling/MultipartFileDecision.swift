/// What a ``MultipartSpooler/fileFilter`` decides for a file part, before any of its bytes is stored: multer's
/// `fileFilter`, busboy's per-file choice. The filter sees what the client said of the file (its field, filename and
/// content type) and its first bytes with the type they show (``MultipartStoreFile/sniffedMediaType``): decide by
/// that, which an SVG or a page labelled `image/png` cannot hide, and take only the types the route wants.
///
/// ```swift
/// spooler.fileFilter = { file in
///     switch file.sniffedMediaType {
///     case "image/png", "image/jpeg", "image/gif", "image/webp": .store
///     case "application/pdf": .skip  // read and dropped; the rest of the form is kept
///     default: .refuse(status: 415, message: "only images are accepted")
///     }
/// }
/// ```
///
/// A skipped or refused file still counts against the limits: its bytes against the parser's, itself against
/// ``MultipartSpooler/Limits/maxFiles``.
public enum MultipartFileDecision: Sendable, Hashable {
    /// Store the file, as without a filter.
    case store
    /// Read the file's bytes and drop them: nothing is stored, and the form goes on without it.
    case skip
    /// Fail the form with ``MultipartError/Code/fileRefused``: its ``MultipartError/httpStatus`` is `status`, and
    /// `message` (sent to the client as it is) says why. Files the form stored before it are removed.
    case refuse(status: Int = 415, message: String)
}
