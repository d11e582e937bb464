import Foundation

/// The command line; every limit has a default fit for a small server, and `--help` lists them.
struct ServerOptions {
    /// The port on 127.0.0.1; 0 lets the system choose (the server prints the one it got).
    var port = 8080
    /// Where uploads are spooled; a new folder under the system's temporary folder when not given.
    var spoolDirectory: String?
    /// The most bytes one file may have.
    var maxFileBytes: Int64 = 8 << 30
    /// Whether each file's SHA-256 is computed (off only to measure what it costs).
    var hashes = true
    /// A request head must arrive whole within this many seconds (nginx's `client_header_timeout`).
    var headerTimeout = 10.0
    /// A connection with nothing read or written for this many seconds is closed.
    var idleTimeout = 30.0
    /// A connection whose writes make no progress for this many seconds is closed.
    var writeTimeout = 10.0
    /// The body must bring this many bytes a second over each window of `bodyWindow` seconds.
    var bodyRate = 1024
    var bodyWindow = 10.0
    /// The most seconds a whole body may take; nil for no limit.
    var bodyDeadline: Double?
    /// Uploads at once; nil to fit the process's descriptor limit.
    var maxUploads: Int?
    /// Connections at once; nil to fit the process's descriptor limit beside the uploads' spool files.
    var maxConnections: Int?
    /// Bytes all uploads may hold on disk at once; nil for half the spool folder's free space at start.
    var diskBudget: Int64?
    /// The most bytes of a field's value, a name or a filename echoed in an answer.
    var echoBytes = 256
    /// At start, spooled files last written more than this many seconds ago are removed: what a crashed run left.
    /// 0 when the folder is this server's alone; with a folder shared by servers, the longest an upload may take.
    var staleAfter = 0.0

    static let usage = """
        usage: UploadServer [--port N] [--spool-dir DIR] [--max-file-bytes N] [--no-sha256]
                            [--header-timeout S] [--idle-timeout S] [--write-timeout S]
                            [--body-rate BYTES] [--body-window S] [--body-deadline S]
                            [--max-uploads N] [--max-connections N] [--disk-budget BYTES] [--echo-bytes N]
                            [--stale-after S]
          --header-timeout S   a request head must arrive within S seconds (default 10)
          --idle-timeout S     a connection idle for S seconds is closed (default 30)
          --write-timeout S    writes stuck for S seconds close the connection (default 10)
          --body-rate BYTES    a body must bring BYTES a second over each window (default 1024)
          --body-window S      the window, in seconds (default 10)
          --body-deadline S    a whole body may take S seconds (default: no limit)
          --max-uploads N      uploads at once, past which 503 (default: fit the descriptor limit)
          --max-connections N  connections at once, past which 503 (default: fit the descriptor limit)
          --disk-budget BYTES  disk all uploads may hold at once, past which 507 (default: half the free space)
          --echo-bytes N       bytes of a value, name or filename echoed in an answer (default 256)
          --stale-after S      at start, remove spooled files a crashed run left, last written over S seconds ago
                               (default 0: the spool folder is this server's alone)
        """

    /// Reads the arguments; a wrong one is a one-line message.
    init(arguments: [String]) throws(UsageError) {
        var rest = arguments[...]
        func value(_ option: String) throws(UsageError) -> String {
            guard let value = rest.popFirst(), !value.isEmpty else { throw UsageError("\(option) takes a value") }
            return value
        }
        func seconds(_ option: String) throws(UsageError) -> Double {
            guard let seconds = Double(try value(option)), seconds > 0, seconds.isFinite else {
                throw UsageError("\(option) takes a number of seconds above 0")
            }
            return seconds
        }
        func count(_ option: String) throws(UsageError) -> Int64 {
            guard let count = Int64(try value(option)), count > 0 else {
                throw UsageError("\(option) takes a whole number above 0")
            }
            return count
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--port":
                guard let port = Int(try value(argument)), (0...65535).contains(port) else {
                    throw UsageError("--port takes a number from 0 to 65535")
                }
                self.port = port
            case "--spool-dir": spoolDirectory = try value(argument)
            case "--max-file-bytes": maxFileBytes = try count(argument)
            case "--no-sha256": hashes = false
            case "--header-timeout": headerTimeout = try seconds(argument)
            case "--idle-timeout": idleTimeout = try seconds(argument)
            case "--write-timeout": writeTimeout = try seconds(argument)
            case "--body-rate": bodyRate = Int(try count(argument))
            case "--body-window": bodyWindow = try seconds(argument)
            case "--body-deadline": bodyDeadline = try seconds(argument)
            case "--max-uploads": maxUploads = Int(try count(argument))
            case "--max-connections": maxConnections = Int(try count(argument))
            case "--disk-budget": diskBudget = try count(argument)
            case "--echo-bytes": echoBytes = Int(try count(argument))
            case "--stale-after":
                guard let seconds = Double(try value(argument)), seconds >= 0, seconds.isFinite else {
                    throw UsageError("--stale-after takes a number of seconds, 0 or more")
                }
                staleAfter = seconds
            case "-h", "--help": throw UsageError(nil)
            default: throw UsageError("unknown argument \(argument)")
            }
        }
    }

    struct UsageError: Error {
        let message: String?
        init(_ message: String?) { self.message = message }
    }
}
