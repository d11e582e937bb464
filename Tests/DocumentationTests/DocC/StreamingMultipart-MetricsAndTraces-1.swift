import Metrics
import StreamingMultipart

/// An app's start: the backend first, then what reports to it.
func start(metrics factory: any MetricsFactory, spoolFolder: String) -> MultipartSpooler {
    MetricsSystem.bootstrap(factory)  // PrometheusMetricsFactory(), say: once, before the rest is made
    return MultipartSpooler(directory: spoolFolder)  // its counters, timers and gauges go to `factory`
}
