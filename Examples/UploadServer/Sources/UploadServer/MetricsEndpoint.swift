import Hummingbird
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle

/// `GET /metrics` in Prometheus's text format (swift-prometheus), on 127.0.0.1 and a port of its own: what the
/// spooler, the budgets, the resumable uploads, the S3 store and each refusal count (StreamingMultipart's
/// `MultipartMetrics` names them).
///
/// ```
/// UploadServer --metrics-port 9090 &
/// curl -s http://127.0.0.1:9090/metrics | grep multipart_uploads_completed_total
/// ```
enum MetricsEndpoint {
    /// The listener's application: one route, and a log line that says its port (the system's choice for 0).
    static func application(registry: PrometheusCollectorRegistry, port: Int, logger: Logger) -> some Service {
        let router = Router()
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
        return Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                logger.info("metrics at http://127.0.0.1:\(port)/metrics")
            },
            logger: logger)
    }
}
