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
    /// The most uploads at once from one client address (429 past it).
    var maxUploadsPerPeer = 8
    /// When the upload slots are full, an upload slower than this (bytes a second, on average) after `cutGrace`
    /// seconds is cut to make room for a new one.
    var protectedRate = 64 << 10
    var cutGrace = 10.0
    /// Bytes all uploads may hold on disk at once; nil for half the spool folder's free space at start.
    var diskBudget: Int64?
    /// The most bytes of a field's value, a name or a filename echoed in an answer.
    var echoBytes = 256
    /// At start, spooled files last written more than this many seconds ago are removed: what a crashed run left.
    /// 0 when the folder is this server's alone; with a folder shared by servers, the longest an upload may take.
    var staleAfter = 0.0
    /// `s3://BUCKET/PREFIX`: files go into this bucket (credentials from `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
    /// `AWS_SESSION_TOKEN`) instead of the spool folder.
    var store: (bucket: String, prefix: String)?
    /// The S3 endpoint, `http://127.0.0.1:7480` say; required with `--store`.
    var s3Endpoint: URL?
    /// The region requests are signed for: `AWS_REGION`, else `us-east-1`.
    var s3Region = ProcessInfo.processInfo.environment["AWS_REGION"] ?? "us-east-1"
    var s3PartSize = 8 << 20
    var s3Concurrency = 4
    /// The memory all uploads into S3 may hold at once (their parts gathering and in flight), past which an upload
    /// waits, then gets 503; the upload slots in S3 mode are sized from it.
    var s3MemoryBudget = 256 << 20
    /// How long an upload waits for room in the memory budget before it gets 503.
    var s3MemoryWait = 30.0
    /// At start, abort the bucket's multipart uploads under the prefix begun over this many seconds ago (what a
    /// killed run left); longer than any upload a server sharing the bucket may still be sending.
    var s3StaleAfter = 86_400.0

    static let usage = """
        usage: UploadServer [--port N] [--spool-dir DIR] [--max-file-bytes N] [--no-sha256]
                            [--header-timeout S] [--idle-timeout S] [--write-timeout S]
                            [--body-rate BYTES] [--body-window S] [--body-deadline S]
                            [--max-uploads N] [--max-uploads-per-peer N]
                            [--protected-rate B/S] [--cut-grace S] [--max-connections N]
                            [--disk-budget BYTES] [--echo-bytes N]
                            [--stale-after S] [--store s3://BUCKET/PREFIX --s3-endpoint URL [--s3-region R]
                            [--s3-part-size BYTES] [--s3-concurrency N] [--s3-memory BYTES]
                            [--s3-memory-wait S] [--s3-stale-after S]]
          --header-timeout S   a request head must arrive within S seconds (default 10)
          --idle-timeout S     a connection idle for S seconds is closed (default 30)
          --write-timeout S    writes stuck for S seconds close the connection (default 10)
          --body-rate BYTES    a body must bring BYTES a second over each window (default 1024)
          --body-window S      the window, in seconds (default 10)
          --body-deadline S    a whole body may take S seconds (default: no limit)
          --max-uploads N      uploads at once, past which 503 (default: fit the descriptor limit)
          --max-uploads-per-peer N
                               uploads at once from one client address, past which 429 (default 8)
          --protected-rate B/S when the uploads are full, one slower than this on average is cut for a new one
                               (default 65536)
          --cut-grace S        an upload is never cut in its first S seconds (default 10)
          --max-connections N  connections at once, past which 503 (default: fit the descriptor limit)
          --disk-budget BYTES  disk all uploads may hold at once, past which 507 (default: half the free space)
          --echo-bytes N       bytes of a value, name or filename echoed in an answer (default 256)
          --stale-after S      at start, remove spooled files a crashed run left, last written over S seconds ago
                               (default 0: the spool folder is this server's alone)
          --store s3://BUCKET/PREFIX  files go into the bucket under PREFIX/ (credentials from AWS_ACCESS_KEY_ID,
                               AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN); each file's answer names its key
          --s3-endpoint URL    the S3 endpoint (required with --store), e.g. http://127.0.0.1:7480
          --s3-region R        the region requests are signed for (default: AWS_REGION, else us-east-1)
          --s3-part-size BYTES the multipart upload's part size, at least 5 MiB (default 8 MiB)
          --s3-concurrency N   parts of one file uploaded at once (default 4)
          --s3-memory BYTES    memory all S3 uploads may hold at once, past which an upload waits, then gets 503;
                               uploads at once default to this over the part size (default 256 MiB)
          --s3-memory-wait S   how long an upload waits for room in it before it gets 503 (default 30)
          --s3-stale-after S   at start, abort the multipart uploads under the prefix begun over S seconds ago,
                               which a killed run left open (default a day: past any upload still being sent)
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
            case "--max-uploads-per-peer": maxUploadsPerPeer = Int(try count(argument))
            case "--protected-rate": protectedRate = Int(try count(argument))
            case "--cut-grace": cutGrace = try seconds(argument)
            case "--disk-budget": diskBudget = try count(argument)
            case "--echo-bytes": echoBytes = Int(try count(argument))
            case "--stale-after":
                guard let seconds = Double(try value(argument)), seconds >= 0, seconds.isFinite else {
                    throw UsageError("--stale-after takes a number of seconds, 0 or more")
                }
                staleAfter = seconds
            case "--store":
                let text = try value(argument)
                // Read by hand: URL's path would drop the prefix's last "/".
                guard text.hasPrefix("s3://") else { throw UsageError("--store takes s3://BUCKET/PREFIX") }
                let rest = text.dropFirst("s3://".count)
                let bucket = rest.prefix { $0 != "/" }
                guard !bucket.isEmpty else { throw UsageError("--store takes s3://BUCKET/PREFIX") }
                // The prefix is a folder, as `aws s3 cp --recursive` reads it: `s3://b/forms` puts keys under `forms/`.
                var prefix = String(rest.dropFirst(bucket.count + 1))
                if !prefix.isEmpty && !prefix.hasSuffix("/") { prefix += "/" }
                store = (String(bucket), prefix)
            case "--s3-endpoint":
                guard let url = URL(string: try value(argument)), ["http", "https"].contains(url.scheme),
                    url.host != nil
                else { throw UsageError("--s3-endpoint takes an http(s) URL") }
                s3Endpoint = url
            case "--s3-region": s3Region = try value(argument)
            case "--s3-part-size":
                let size = try count(argument)
                guard size >= 5 << 20 else { throw UsageError("--s3-part-size takes at least 5 MiB (5242880)") }
                s3PartSize = Int(size)
            case "--s3-concurrency": s3Concurrency = Int(try count(argument))
            case "--s3-memory": s3MemoryBudget = Int(try count(argument))
            case "--s3-memory-wait": s3MemoryWait = try seconds(argument)
            case "--s3-stale-after":
                guard let seconds = Double(try value(argument)), seconds >= 0, seconds.isFinite else {
                    throw UsageError("--s3-stale-after takes a number of seconds, 0 or more")
                }
                s3StaleAfter = seconds
            case "-h", "--help": throw UsageError(nil)
            default: throw UsageError("unknown argument \(argument)")
            }
        }
        if store != nil, s3Endpoint == nil { throw UsageError("--store needs --s3-endpoint") }
    }

    struct UsageError: Error {
        let message: String?
        init(_ message: String?) { self.message = message }
    }
}
