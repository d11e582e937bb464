/// What a ``MultipartSpooler/fileFilter`` decides for a file part, from what the client said of it (its field,
/// filename and content type) and before any of its bytes is stored: multer's `fileFilter`, busboy's per-file
/// choice. Compare the type as ``MultipartStoreFile/mediaType`` gives it (lower case, no parameters), never the raw
/// ``MultipartStoreFile/contentType``: `image/SVG+XML; charset=utf-8` is an SVG image to a browser.
///
/// ```swift
/// spooler.fileFilter = { file in
///     switch file.mediaType {
///     case "image/svg+xml"?: .refuse(status: 415, message: "SVG images are not accepted")
///     case let type? where type.hasPrefix("image/"): .store
///     default: .skip  // read and dropped; the rest of the form is kept
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
