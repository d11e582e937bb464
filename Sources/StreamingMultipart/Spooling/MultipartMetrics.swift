import Metrics

/// The names of the counters, timers and gauges the package reports through swift-metrics, and of the spans it
/// starts through swift-distributed-tracing. The library has no backend: an app bootstraps its own
/// (`MetricsSystem.bootstrap`, `InstrumentationSystem.bootstrap`) before it makes its spooler, stores and resumable
/// uploads, which make their metrics when they are made (a test binds a factory to its task with
/// `withMetricsFactory`).
///
/// No client text is ever a dimension: a field's name or a filename never becomes a label, so a client cannot grow
/// a backend's series. The one dimension with values is a refusal's `status` and `code`, both from the package's
/// own tables (``MultipartErrorResponse``). Names follow Prometheus's conventions: `_total` for a counter,
/// `_seconds` for a timer, `_bytes` for bytes.
///
/// ```swift
/// MetricsSystem.bootstrap(PrometheusMetricsFactory())   // first, in main
/// let spooler = MultipartSpooler(directory: "/var/spool/uploads")   // its metrics go to Prometheus
/// // multipart_uploads_started_total, multipart_bytes_received_total, …
/// ```
///
/// <doc:MetricsAndTraces> lists each metric with what counts it.
public enum MultipartMetrics {
    /// Counter: forms a spooler began to read.
    public static let uploadsStarted = "multipart_uploads_started_total"
    /// Counter: forms a spooler read whole (every file stored, every field kept).
    public static let uploadsCompleted = "multipart_uploads_completed_total"
    /// Counter: requests refused with a form error, by `status` and `code` (``MultipartErrorResponse/code``): what
    /// ``MultipartFormError/report(to:)`` reports, once for each refusal the server products answer, including those
    /// refused before a form began (429 and 503 from the admission, 415).
    public static let uploadsRefused = "multipart_uploads_refused_total"
    /// Counter: body bytes a spooler read, as sent (before any `Content-Encoding` is undone).
    public static let bytesReceived = "multipart_bytes_received_total"
    /// Counter: bytes of file parts a spooler handed to its destination (the spool folder or a store), for forms
    /// that completed or not.
    public static let bytesSpooled = "multipart_bytes_spooled_total"
    /// Counter: bytes an object store acknowledged (the S3 store's parts and whole objects).
    public static let bytesStored = "multipart_bytes_stored_total"
    /// Counter: appends that resumed a resumable upload after its connection dropped.
    public static let resumptions = "multipart_resumptions_total"
    /// Counter: resumable uploads that failed because the client did not resume them within their window.
    public static let resumableAbandoned = "multipart_resumable_abandoned_total"
    /// Counter: requests to S3 sent again after a transient failure (a part's, a whole object's, a completion's,
    /// an abort's).
    public static let s3Retries = "multipart_s3_retries_total"
    /// Timer: how long a spooler took over a form, from its first byte to its end, completed or not.
    public static let formDuration = "multipart_form_duration_seconds"
    /// Timer: how long a spooler took over one file part, from its first byte to the store's acknowledgement.
    public static let fileDuration = "multipart_file_duration_seconds"
    /// Timer: how long one S3 part took, from its first request to S3's acknowledgement (its retries included).
    public static let s3PartDuration = "multipart_s3_part_duration_seconds"
    /// Gauge: forms being read now.
    public static let uploadsInFlight = "multipart_uploads_in_flight"
    /// Gauge: resumable uploads paused now (their connection dropped; waiting for the client within the window).
    public static let uploadsPaused = "multipart_uploads_paused"
    /// Gauge: bytes held now of every ``MultipartMemoryBudget``.
    public static let memoryBudgetInUse = "multipart_memory_budget_in_use_bytes"
    /// Gauge: bytes held now of every ``MultipartSpooler/DiskBudget``.
    public static let diskBudgetInUse = "multipart_disk_budget_in_use_bytes"

    /// The span of one form a spooler reads; its attributes are `multipart.files` and `multipart.fields`, or
    /// `multipart.error.code` when it fails.
    public static let formSpan = "multipart.form"
    /// The span of one file part, inside its form's; its attributes are `multipart.part_index`,
    /// `multipart.sniffed_type` (from the package's own table, never the client's text) and `multipart.bytes`.
    public static let fileSpan = "multipart.file"
    /// The span of one S3 part, inside its file's; its attributes are `s3.part_number` and `multipart.bytes`.
    public static let s3PartSpan = "multipart.s3.part"
}

/// A spooler's metrics, made with the factory in effect when the spooler is made: shared by its copies, so that a
/// form costs no factory lookup.
final class SpoolerMetrics: Sendable {
    let started: Counter
    let completed: Counter
    let received: Counter
    let spooled: Counter
    let formDuration: Timer
    let fileDuration: Timer
    let inFlight: Meter

    init(factory: any MetricsFactory = MetricsSystem.factory) {
        started = Counter(label: MultipartMetrics.uploadsStarted, factory: factory)
        completed = Counter(label: MultipartMetrics.uploadsCompleted, factory: factory)
        received = Counter(label: MultipartMetrics.bytesReceived, factory: factory)
        spooled = Counter(label: MultipartMetrics.bytesSpooled, factory: factory)
        formDuration = Timer(label: MultipartMetrics.formDuration, factory: factory)
        fileDuration = Timer(label: MultipartMetrics.fileDuration, factory: factory)
        inFlight = Meter(label: MultipartMetrics.uploadsInFlight, factory: factory)
    }
}

extension Meter {
    /// Adds `delta` (which may be negative) to the gauge.
    func add(_ delta: Int64) {
        if delta > 0 { increment(by: Double(delta)) } else if delta < 0 { decrement(by: Double(-delta)) }
    }
}
