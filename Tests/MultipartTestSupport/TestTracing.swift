public import InMemoryTracing
import Instrumentation

extension InMemoryTracer {
    /// One in-memory tracer for the test process, installed as the process's tracer the first time it is asked
    /// for (`InstrumentationSystem` takes one bootstrap per process). Tests run at once: each starts a root span of
    /// its own and reads only the finished spans of its trace.
    ///
    /// ```swift
    /// let tracer = InMemoryTracer.installedForTests
    /// let root = withSpan("test.root") { $0.context.inMemorySpanContext! }
    /// let mine = tracer.finishedSpans.filter { $0.traceID == root.traceID }
    /// ```
    public static var installedForTests: InMemoryTracer { installed }

    private static let installed: InMemoryTracer = {
        let tracer = InMemoryTracer()
        InstrumentationSystem.bootstrap(tracer)
        return tracer
    }()
}
