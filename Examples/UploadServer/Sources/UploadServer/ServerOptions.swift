import Foundation

/// The command line: `UploadServer [--port N] [--spool-dir DIR] [--max-file-bytes N]`.
struct ServerOptions {
    /// The port on 127.0.0.1; 0 lets the system choose (the server prints the one it got).
    var port = 8080
    /// Where uploads are spooled; a new folder under the system's temporary folder when not given.
    var spoolDirectory: String?
    /// The most bytes one file may have.
    var maxFileBytes: Int64 = 8 << 30
    /// Whether each file's SHA-256 is computed (off only to measure what it costs).
    var hashes = true

    static let usage = "usage: UploadServer [--port N] [--spool-dir DIR] [--max-file-bytes N] [--no-sha256]"

    /// Reads the arguments; a wrong one is a one-line message.
    init(arguments: [String]) throws(UsageError) {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--port":
                guard let value = rest.popFirst(), let port = Int(value), (0...65535).contains(port) else {
                    throw UsageError("--port takes a number from 0 to 65535")
                }
                self.port = port
            case "--spool-dir":
                guard let value = rest.popFirst(), !value.isEmpty else {
                    throw UsageError("--spool-dir takes a folder")
                }
                spoolDirectory = value
            case "--max-file-bytes":
                guard let value = rest.popFirst(), let bytes = Int64(value), bytes > 0 else {
                    throw UsageError("--max-file-bytes takes a number of bytes above 0")
                }
                maxFileBytes = bytes
            case "--no-sha256":
                hashes = false
            case "-h", "--help":
                throw UsageError(nil)
            default:
                throw UsageError("unknown argument \(argument)")
            }
        }
    }

    struct UsageError: Error {
        let message: String?
        init(_ message: String?) { self.message = message }
    }
}
