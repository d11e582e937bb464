import ArgumentParser
import Foundation
import StreamingMultipart
import StreamingMultipartCrypto
import StreamingMultipartHummingbird

/// The digest `--digest` names.
enum FileDigest: String, ExpressibleByArgument, CaseIterable {
    case sha256, crc32c, none

    /// The spooler's digest; nil for none.
    var spoolDigest: (any SpoolDigest.Type)? {
        switch self {
        case .sha256: SHA256Digest.self
        case .crc32c: CRC32CDigest.self
        case .none: nil
        }
    }
}

/// The command line, read by ArgumentParser (`UploadServer --help` lists it). Every limit has a default fit for a
/// small server.
struct ServerOptions: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "UploadServer",
        abstract: "A form page at GET /, uploads at POST /upload spooled to disk or a bucket, on 127.0.0.1.")

    @Option(help: "The port on 127.0.0.1; 0 lets the system choose (the server prints the one it got).")
    var port = 8080
    @Option(help: "Where uploads are spooled (default: a new folder in the temporary folder).")
    var spoolDir: String?
    @Option(
        help: """
            A PEM certificate chain (with --tls-key): serve HTTPS, HTTP/2 or HTTP/1.1 as ALPN chooses, each with the \
            same guards.
            """)
    var tlsCertificate: String?
    @Option(help: "The PEM private key of --tls-certificate.")
    var tlsKey: String?
    @Flag(
        help: """
            Without TLS, serve HTTP/2 with prior knowledge (h2c, for a proxy in front) beside HTTP/1.1 on the same \
            port (with TLS, HTTP/2 is always offered).
            """)
    var http2 = false
    @Option(
        help: """
            HTTP/2: the bytes of a stream's body taken ahead of its route (its flow-control window); what a slow \
            store makes the server hold a stream, up to --http2-streams times a connection.
            """)
    var http2StreamWindow = HTTP2Limits().streamWindow
    @Option(help: "HTTP/2: the streams one connection may have open at once.")
    var http2Streams = HTTP2Limits().maxConcurrentStreams
    @Option(help: "The most bytes one file may have.")
    var maxFileBytes: Int64 = 8 << 30
    @Option(
        help: """
            Each file's digest, in the answer: sha256, crc32c (at memory speed; with --store, each part's checksum \
            too, sent as UNSIGNED-PAYLOAD: use an https endpoint) or none.
            """)
    var digest = FileDigest.sha256
    @Option(help: "A request head must arrive whole within this many seconds.")
    var headerTimeout = 10.0
    @Option(help: "A connection with nothing read or written for this many seconds is closed.")
    var idleTimeout = 30.0
    @Option(help: "A connection whose writes make no progress for this many seconds is closed.")
    var writeTimeout = 10.0
    @Option(help: "A body must bring this many bytes a second over each window of --body-window seconds.")
    var bodyRate = 1024
    @Option(help: "The window of --body-rate, in seconds.")
    var bodyWindow = 10.0
    @Option(help: "The most seconds a whole body may take (default: no limit).")
    var bodyDeadline: Double?
    @Option(help: "Uploads at once, past which 503 (default: fit the descriptor limit).")
    var maxUploads: Int?
    @Option(help: "Uploads at once from one client address, past which 429.")
    var maxUploadsPerPeer = 8
    @Option(help: "When the slots are full, an upload slower than this (bytes a second) is cut for a new one.")
    var protectedRate = 64 << 10
    @Option(help: "An upload is never cut in its first this many seconds.")
    var cutGrace = 10.0
    @Option(help: "Connections at once, past which 503 (default: fit the descriptor limit beside the uploads).")
    var maxConnections: Int?
    @Option(help: "Bytes all uploads may hold on disk at once, past which 507 (default: half the free space).")
    var diskBudget: Int64?
    @Option(
        help: """
            Keep the files of each upload answered 200 in this folder, in a folder of its own (moved there from the \
            spool folder, all or none, before the answer, which names them): the files are the app's from then on. \
            Default: none kept, every file removed once the answer is made. Not with --store.
            """)
    var keepDir: String?
    @Option(help: "The most bytes of a field's value, a name or a filename echoed in an answer.")
    var echoBytes = 256
    @Option(help: "At start, remove spooled files a crashed run left, last written over this many seconds ago.")
    var staleAfter = 0.0
    @Option(help: "s3://BUCKET/PREFIX: files go into the bucket under PREFIX/ (credentials by the SDKs' chain).")
    var store: String?
    @Option(help: "The S3 endpoint (required with --store), e.g. http://127.0.0.1:7480.")
    var s3Endpoint: String?
    @Option(help: "The region requests are signed for (default: AWS_REGION, else us-east-1).")
    var s3Region = ProcessInfo.processInfo.environment["AWS_REGION"] ?? "us-east-1"
    @Option(help: "The multipart upload's part size, at least 5 MiB.")
    var s3PartSize = 8 << 20
    @Option(help: "Parts of one file uploaded at once.")
    var s3Concurrency = 4
    @Option(name: .customLong("s3-memory"), help: "Memory all S3 uploads may hold at once, past which they wait.")
    var s3MemoryBudget = 256 << 20
    @Option(help: "How long one S3 request may take, from its start to the end of the answer, in seconds.")
    var s3RequestTimeout = 300.0
    @Option(help: "How many times a failed S3 request is sent again (a part, a PutObject, a completion, an abort).")
    var s3Retries = 3
    @Option(help: "How long an upload waits for room in that memory before it gets 503, in seconds.")
    var s3MemoryWait = 30.0
    @Option(help: "A dropped upload may resume within this many seconds (announced with 104); 0 turns resumption off.")
    var resumeWindow = 300.0
    @Option(help: "A resumable upload must be complete within this many seconds of its start, however it is fed.")
    var resumeLifetime = 3600.0
    @Option(
        help: """
            This server's name among several behind one load balancer (letters and digits, at most 32): each upload's \
            location begins with it, /resumable_upload/NODE-…, for the balancer to route its resumptions by \
            (Deploy/nginx-fleet.conf).
            """)
    var node: String?
    @Flag(
        inversion: .prefixedNo,
        help: """
            Answer a resumable upload's creation with 104 at once. --no-interim-responses behind a proxy that cannot \
            pass a 104 on (nginx 1.22 holds the answer until the connection closes): then only a creation that says \
            Upload-Complete: ?0 is resumable (the browser page's).
            """)
    var interimResponses = true
    @Option(
        help: """
            Serve the metrics at /metrics in Prometheus's text format on this port of 127.0.0.1, a listener apart \
            from the uploads' (0 lets the system choose; the log says which). Off by default.
            """)
    var metricsPort: Int?
    @Option(
        help: ArgumentHelp(
            "At start, abort the multipart uploads this store made (its prefix and 32 hex digits) begun over this "
                + "many seconds ago (a day)."))
    var s3StaleAfter = 86_400.0

    /// `--store`'s bucket and prefix, read by hand (URL's path would drop the prefix's last "/"). The prefix is a
    /// folder, as `aws s3 cp --recursive` reads it: `s3://b/forms` puts keys under `forms/`.
    var bucketAndPrefix: (bucket: String, prefix: String)? {
        guard let store, store.hasPrefix("s3://") else { return nil }
        let rest = store.dropFirst("s3://".count)
        let bucket = rest.prefix { $0 != "/" }
        var prefix = String(rest.dropFirst(bucket.count + 1))
        if !prefix.isEmpty && !prefix.hasSuffix("/") { prefix += "/" }
        return bucket.isEmpty ? nil : (String(bucket), prefix)
    }

    var endpoint: URL? { s3Endpoint.flatMap { URL(string: $0) } }

    mutating func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port takes a number from 0 to 65535") }
        if (tlsCertificate == nil) != (tlsKey == nil) {
            throw ValidationError("--tls-certificate and --tls-key go together")
        }
        if let metricsPort, !(0...65535).contains(metricsPort) {
            throw ValidationError("--metrics-port takes a number from 0 to 65535")
        }
        let positive: [(String, Double)] = [
            ("--header-timeout", headerTimeout), ("--idle-timeout", idleTimeout), ("--write-timeout", writeTimeout),
            ("--body-window", bodyWindow), ("--body-deadline", bodyDeadline ?? 1), ("--cut-grace", cutGrace),
            ("--s3-memory-wait", s3MemoryWait), ("--max-file-bytes", Double(maxFileBytes)),
            ("--body-rate", Double(bodyRate)), ("--max-uploads", Double(maxUploads ?? 1)),
            ("--max-uploads-per-peer", Double(maxUploadsPerPeer)), ("--max-connections", Double(maxConnections ?? 1)),
            ("--disk-budget", Double(diskBudget ?? 1)), ("--echo-bytes", Double(echoBytes)),
            ("--s3-concurrency", Double(s3Concurrency)), ("--s3-memory", Double(s3MemoryBudget)),
            ("--resume-lifetime", resumeLifetime), ("--s3-request-timeout", s3RequestTimeout),
            ("--http2-stream-window", Double(http2StreamWindow)), ("--http2-streams", Double(http2Streams)),
        ]
        for (name, value) in positive where !(value > 0 && value.isFinite) {
            throw ValidationError("\(name) takes a number above 0")
        }
        for (name, value) in [
            ("--stale-after", staleAfter), ("--s3-stale-after", s3StaleAfter), ("--resume-window", resumeWindow),
            ("--s3-retries", Double(s3Retries)),
        ]
        where !(value >= 0 && value.isFinite) {
            throw ValidationError("\(name) takes a number of seconds, 0 or more")
        }
        if let node, node.isEmpty || node.count > 32 || !node.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
        {
            throw ValidationError("--node takes a name of 1 to 32 ASCII letters and digits")
        }
        guard s3PartSize >= 5 << 20 else { throw ValidationError("--s3-part-size takes at least 5 MiB (5242880)") }
        if store != nil, bucketAndPrefix == nil { throw ValidationError("--store takes s3://BUCKET/PREFIX") }
        if let s3Endpoint, !["http", "https"].contains(URL(string: s3Endpoint)?.scheme ?? "") {
            throw ValidationError("--s3-endpoint takes an http(s) URL")
        }
        if store != nil, s3Endpoint == nil { throw ValidationError("--store needs --s3-endpoint") }
        if store != nil, keepDir != nil { throw ValidationError("--keep-dir keeps spooled files: not with --store") }
    }
}

extension Duration {
    /// An option's `seconds` (finite, 0 or more: ``ServerOptions/validate()``) as a duration. Past 1e9 seconds
    /// (32 years, as good as forever) it is held at 1e9: the nanoseconds of `--stale-after 1e30` overflowed, and the
    /// server stopped with a fatal error.
    static func optionSeconds(_ seconds: Double) -> Duration { .nanoseconds(Int64(min(seconds, 1e9) * 1e9)) }
}
