public import Logging

extension Logger {
    /// A logger that drops everything: what the spooler and the stores log to unless they are given one.
    @usableFromInline
    package static let disabled = Logger(label: "StreamingMultipart", factory: { _ in SwiftLogNoOpLogHandler() })
}
