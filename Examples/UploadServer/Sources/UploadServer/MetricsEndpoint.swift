import Hummingbird
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle
import StreamingMultipartHummingbird
import StreamingMultipartServer

/// `GET /metrics` in Prometheus's text format (swift-prometheus), on 127.0.0.1 and a port of its own: what the
/// spooler, the budgets, the resumable uploads, the S3 store and each refusal count (StreamingMultipart's
/// `MultipartMetrics` names them). Behind the uploads' guards (`guards`: a head's deadline, a write's timeout) and
/// a connection limit of its own, so that a client that holds the metrics port holds none of the uploads' slots.
///
/// ```
/// UploadServer --metrics-port 9090 &
/// curl -s http://127.0.0.1:9090/metrics | grep multipart_uploads_completed_total
/// ```
enum MetricsEndpoint {
    /// Connections at once on the metrics port: a scraper or two, and room for a person with curl.
    static let connectionLimit = 16

    /// The listener's application: one route, and a log line that says its port (the system's choice for 0).
    static func application(
        registry: PrometheusCollectorRegistry, port: Int, guards: HTTPServerGuards, idleTimeout: Duration,
        logger: Logger
    ) -> some Service {
        let router = Router()
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
        var guards = guards
        guards.connections = ConnectionLimit(limit: connectionLimit)
        return Application(
            router: router, server: .guardedHTTP1(guards: guards, idleTimeout: idleTimeout),
            configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                logger.info("metrics at http://127.0.0.1:\(port)/metrics")
            },
            logger: logger)
    }
}
