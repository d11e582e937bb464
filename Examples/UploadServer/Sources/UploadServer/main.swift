import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import Metrics
import NIOCore
import NIOSSL
import Prometheus
import ServiceLifecycle
import StreamingMultipart
import StreamingMultipartCrypto
import StreamingMultipartHummingbird
import StreamingMultipartNIO
import StreamingMultipartS3
import StreamingMultipartServer

// UploadServer: a form page at GET /, uploads at POST /upload, on 127.0.0.1.

let options = ServerOptions.parseOrExit()  // a wrong argument: a message, the usage, exit 64
/// Stops the server at start with what is wrong: a deployment's mistake, said before any connection.
func stop(_ message: String) -> Never {
    FileHandle.standardError.write(Data("UploadServer: \(message)\n".utf8))
    exit(1)
}
// The certificate and key load first: a deployment's mistake stops the server before it makes anything.
let tls: TLSConfiguration? = {
    guard let certificatePath = options.tlsCertificate, let keyPath = options.tlsKey else { return nil }
    let chain: [NIOSSLCertificate]
    let key: NIOSSLPrivateKey
    do {
        chain = try NIOSSLCertificate.fromPEMFile(certificatePath)
    } catch {
        stop("--tls-certificate \(certificatePath): no PEM certificate chain loads from it (\(error))")
    }
    if chain.isEmpty { stop("--tls-certificate \(certificatePath): it holds no certificate") }
    do {
        key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
    } catch {
        stop("--tls-key \(keyPath): no PEM private key loads from it (\(error))")
    }
    return .makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
}()

UploadServerHeap.keepFreedMemory()  // freed memory reused, not faulted back in (its docs)

// Metrics first: the spooler, the budgets and the resumable uploads make theirs when they are made.
let metricsRegistry = options.metricsPort.map { _ in PrometheusCollectorRegistry() }
if let metricsRegistry { MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: metricsRegistry)) }

let spoolDirectory: String
let madeSpoolDirectory = options.spoolDir == nil
if let given = options.spoolDir {
    spoolDirectory = given
} else {
    spoolDirectory =
        FileManager.default.temporaryDirectory.appendingPathComponent("UploadServer-\(UUID().uuidString)")
        .path
    try FileManager.default.createDirectory(
        atPath: spoolDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
}
var isDirectory: ObjCBool = false
guard FileManager.default.fileExists(atPath: spoolDirectory, isDirectory: &isDirectory), isDirectory.boolValue else {
    FileHandle.standardError.write(Data("UploadServer: the spool folder \(spoolDirectory) does not exist\n".utf8))
    exit(1)
}

var logger = Logger(label: "UploadServer")
logger.logLevel = .info

var limits = MultipartSpooler.Limits()
limits.parser.maxFileBytes = options.maxFileBytes
limits.bodyTimeout = MultipartBodyTimeout(
    minimumBytesPerSecond: options.bodyRate, window: .optionSeconds(options.bodyWindow),
    deadline: options.bodyDeadline.map { .optionSeconds($0) })
let budget = MultipartSpooler.DiskBudget(bytes: options.diskBudget ?? DiskSpace.halfFree(at: spoolDirectory))
// In S3 mode an upload gathers its parts in memory: no more uploads at once than the memory budget holds parts
// (each needs one to go on; the budget makes the rest wait, then answers 503).
let memoryBudget = MultipartMemoryBudget(
    bytes: options.s3MemoryBudget, maxWait: .optionSeconds(options.s3MemoryWait))
let fittingMemory = options.bucketAndPrefix == nil ? Int.max : max(1, memoryBudget.bytes / options.s3PartSize)
let admission = UploadAdmission(
    .init(
        maxUploads: options.maxUploads ?? min(ConnectionLimit.uploadsFittingDescriptors(), fittingMemory),
        maxUploadsPerPeer: options.maxUploadsPerPeer, protectedRate: options.protectedRate,
        grace: .optionSeconds(options.cutGrace)))
let connections =
    options.maxConnections.map { ConnectionLimit(limit: $0) }
    ?? ConnectionLimit.fittingDescriptors(uploads: admission.configuration.maxUploads)
let spooler: MultipartSpooler
var s3Store: S3Store?
if let (bucket, prefix) = options.bucketAndPrefix, let endpoint = options.endpoint {
    // Files into the bucket: several servers behind one balancer share it.
    do {
        var configuration = try S3Store.Configuration(
            endpoint: endpoint, bucket: bucket, prefix: prefix, region: options.s3Region,
            credentials: .default())
        configuration.partSize = options.s3PartSize
        configuration.concurrency = options.s3Concurrency
        configuration.memoryBudget = memoryBudget
        configuration.requestTimeout = .milliseconds(Int64(min(options.s3RequestTimeout, 1e9) * 1000))
        configuration.retry.attempts = options.s3Retries
        if options.digest == .crc32c { configuration.checksum = .crc32c }
        s3Store = try S3Store(configuration: configuration, logger: logger)
        spooler = MultipartSpooler(
            store: s3Store!, limits: limits, digest: options.digest.spoolDigest, logger: logger)
    } catch {
        FileHandle.standardError.write(Data("UploadServer: \(error)\n".utf8))
        exit(1)
    }
} else {
    spooler = MultipartSpooler(
        directory: spoolDirectory, limits: limits, digest: options.digest.spoolDigest,
        diskBudget: budget)
}
let service = UploadService(
    spooler: spooler, admission: admission, echoBytes: options.echoBytes, keepDirectory: options.keepDir)

// Files a crashed run left behind (a spool file outlives its process when nothing is left to remove it).
if options.bucketAndPrefix == nil {
    let stale = try service.spooler.removeStaleFiles(olderThan: .optionSeconds(options.staleAfter))
    logger.info("removed \(stale) spooled files an earlier run left in \(spoolDirectory)")
}
if let keepDir = options.keepDir {
    let staged = try UploadService.removeStaging(in: keepDir)
    logger.info("removed \(staged) uploads an earlier run was keeping in \(keepDir) when it stopped")
}
// Multipart uploads a killed run left open in the bucket (a running server aborts its own failed uploads).
if let s3Store {
    do {
        // No credentials is a deployment's mistake: said at start, not at the first upload.
        let credentials = try await s3Store.credentials()
        logger.info("signing S3 requests as \(credentials.accessKeyID) (\(s3Store.configuration.credentials))")
    } catch {
        FileHandle.standardError.write(Data("UploadServer: \(error)\n".utf8))
        exit(1)
    }
    do {
        let removed = try await s3Store.abortStaleUploads(olderThan: .optionSeconds(options.s3StaleAfter))
        logger.info("removed \(removed) multipart uploads and unfinished forms an earlier run left in the bucket")
    } catch {
        logger.warning("could not sweep the bucket's open multipart uploads and unfinished forms: \(error)")
    }
}

let router = Router(context: UploadRequestContext.self)
router.get("/") { _, _ in
    Response(
        status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
        body: .init(byteBuffer: ByteBuffer(string: FormPage.html)))
}
router.get("/upload.css") { _, _ in
    Response(
        status: .ok, headers: [.contentType: "text/css; charset=utf-8"],
        body: .init(byteBuffer: ByteBuffer(string: FormPage.css)))
}
let web = WebFiles.load()
if !web.missing.isEmpty {
    logger.warning(
        "the web files \(web.missing) are not beside the binary: /resumable and /resumable-form.js answer 404")
}
for file in web.files.values {
    router.get(RouterPath(file.path)) { _, _ in
        Response(
            status: .ok, headers: [.contentType: file.contentType, .cacheControl: "no-cache"],
            body: .init(byteBuffer: ByteBuffer(bytes: file.bytes)))
    }
}
router.post("/upload") { request, context in
    try await service.upload(request, context: context)
}

let guards = HTTPServerGuards(
    headerTimeout: TimeAmount(Duration.optionSeconds(options.headerTimeout)),
    writeTimeout: TimeAmount(Duration.optionSeconds(options.writeTimeout)), connections: connections,
    answersUnreadableRequests: false)  // Hummingbird answers what NIO's parser refuses
// A dropped upload resumes where it stopped (104 Upload Resumption Supported, then HEAD and PATCH on its location).
let resumableUploads =
    options.resumeWindow > 0
    ? ResumableUploads(
        .init(
            window: .optionSeconds(options.resumeWindow), paths: ["/upload"],
            lifetime: .optionSeconds(options.resumeLifetime), maxSize: limits.parser.maxBodyBytes,
            node: options.node, interimResponses: options.interimResponses)) : nil
// HTTPS (HTTP/2 or HTTP/1.1 by ALPN) with a certificate; h2c beside HTTP/1.1 with --http2; else HTTP/1.1 alone.
let server: HTTPServerBuilder =
    tls != nil || options.http2
    ? try .guardedHTTP2(
        tls: tls, guards: guards,
        http2: HTTP2Limits(maxConcurrentStreams: options.http2Streams, streamWindow: options.http2StreamWindow),
        idleTimeout: .optionSeconds(options.idleTimeout), resumableUploads: resumableUploads)
    : .guardedHTTP1(
        guards: guards, idleTimeout: .optionSeconds(options.idleTimeout), resumableUploads: resumableUploads)
let app = Application(
    router: router,
    server: server,
    configuration: .init(address: .hostname("127.0.0.1", port: options.port)),
    onServerRunning: { channel in
        let port = channel.localAddress?.port ?? 0
        // Unbuffered: a test or a script waits for this line to learn the port.
        let scheme = tls == nil ? "http" : "https"
        let target = options.bucketAndPrefix.map { "s3://\($0.bucket)/\($0.prefix)" } ?? spoolDirectory
        FileHandle.standardOutput.write(
            Data("UploadServer listening on \(scheme)://127.0.0.1:\(port)/, spooling to \(target)\n".utf8))
    },
    logger: logger
)
// The metrics on a listener of their own, so that /metrics is never on the uploads' port (nor behind its guards).
var services: [any Service] = [app]
if let metricsRegistry, let metricsPort = options.metricsPort {
    services.append(
        MetricsEndpoint.application(
            registry: metricsRegistry, port: metricsPort, guards: guards,
            idleTimeout: .optionSeconds(options.idleTimeout),
            logger: logger))
}
logger.info(
    "limits: \(connections.limit) connections and \(admission.configuration.maxUploads) uploads at once (\(admission.configuration.maxUploadsPerPeer) per address), a disk budget of \(budget.bytes) bytes, header timeout \(options.headerTimeout) s, body at least \(options.bodyRate) B/s over \(options.bodyWindow) s"
)
do {
    try await ServiceGroup(  // until SIGINT or SIGTERM
        configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
    ).run()
} catch {
    // A port another process holds is the usual reason: said so, with the option that sets it, not a backtrace.
    let ports = ["--port \(options.port)"] + (options.metricsPort.map { ["--metrics-port \($0)"] } ?? [])
    let said =
        (error as? IOError)?.errnoCode == EADDRINUSE
        ? "127.0.0.1 is already listening on \(ports.joined(separator: " or ")) (another process holds it): "
            + "choose another port, or 0 for a free one"
        : "the server stopped: \(error)"
    FileHandle.standardError.write(Data("UploadServer: \(said)\n".utf8))
    if madeSpoolDirectory { try? FileManager.default.removeItem(atPath: spoolDirectory) }
    exit(1)
}
if madeSpoolDirectory {
    try? FileManager.default.removeItem(atPath: spoolDirectory)  // empty: every upload's files went with its request
}
