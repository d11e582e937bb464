import Foundation
import StreamingMultipart

/// What `multipart send` shows on standard error while the body goes out: a bar redrawn in place on a terminal
/// (bytes, percentage, rate, time left, the part being sent), a plain line a second otherwise, or nothing.
///
/// Called from the task that reads the body; the lock keeps a retry notice and a redraw from interleaving.
final class SendProgress: @unchecked Sendable {
    private let lock = NSLock()
    private let style: SendCommand.ProgressStyle
    private let total: Int64?
    /// A label per part: its filename, else its field name.
    private let labels: [String]
    private var attemptStart = ContinuousClock.now
    private var lastDraw: ContinuousClock.Instant?
    private var latest: MultipartBody.Progress?
    /// Whether a bar is on the screen, its line not yet ended.
    private var barShown = false
    private var finished = false

    init(style: SendCommand.ProgressStyle, body: MultipartBody) {
        self.style = style
        self.lastDraw = style == .plain ? .now : nil  // plain lines after a second: a short upload prints one
        self.total = body.contentLength
        self.labels = body.parts.map { part in
            let disposition = part.headers[.contentDisposition].flatMap { try? ContentDisposition(parsing: $0) }
            return disposition?.filename ?? disposition?.name ?? "?"
        }
    }

    /// Takes the body's progress; draws when the last drawing is old enough (10 a second for the bar, 1 for lines).
    func update(_ progress: MultipartBody.Progress) {
        lock.withLock {
            guard !finished else { return }
            let now = ContinuousClock.now
            if let latest, progress.completedBytes < latest.completedBytes { attemptStart = now }  // a new attempt
            latest = progress
            let interval: Duration = style == .bar ? .milliseconds(100) : .seconds(1)
            if let lastDraw, now - lastDraw < interval { return }
            lastDraw = now
            draw(progress, now: now)
        }
    }

    /// A line between drawings (a retry notice), the bar redrawn after it.
    func note(_ message: String) {
        lock.withLock {
            var text = barShown ? "\r\u{1B}[K" : ""
            text += "multipart: \(message)\n"
            barShown = false
            write(text)
        }
    }

    /// Draws the last state and ends the bar's line; once.
    func finish() {
        lock.withLock {
            guard !finished else { return }
            finished = true
            guard let latest, style != .none else { return }
            draw(latest, now: .now)
            if style == .bar {
                write("\n")
                barShown = false
            }
        }
    }

    private func draw(_ progress: MultipartBody.Progress, now: ContinuousClock.Instant) {
        let elapsed = max((now - attemptStart).seconds, 0.001)
        let rate = Double(progress.completedBytes) / elapsed
        let total = progress.totalBytes ?? self.total
        let left = total.map { rate > 0 ? Double($0 - progress.completedBytes) / rate : 0 }
        let part = progress.partIndex.map { index in
            labels.indices.contains(index) ? "part \(index + 1)/\(labels.count) \(labels[index])" : "part \(index + 1)"
        }
        switch style {
        case .none:
            return
        case .plain:
            var line = "multipart: sent \(Self.size(progress.completedBytes))"
            if let total { line += " of \(Self.size(total)) (\(Self.percent(progress.completedBytes, total)))" }
            line += ", \(Self.size(Int64(rate)))/s"
            if let left, !finished { line += ", \(Self.clock(left)) left" }
            if let part, !finished { line += ", \(part)" }
            write(line + "\n")
        case .bar:
            let width = terminalWidth(STDERR_FILENO) ?? 80
            var tail = " \(Self.size(progress.completedBytes))"
            if let total { tail += "/\(Self.size(total)) \(Self.percent(progress.completedBytes, total))" }
            tail += " \(Self.size(Int64(rate)))/s"
            if let left { tail += finished ? " \(Self.clock(elapsed))" : " ETA \(Self.clock(left))" }
            let label = String((part ?? (finished ? "done" : "")).prefix(max(0, width / 3)))
            let barWidth = max(0, width - label.count - tail.count - 4)
            var bar = ""
            if let total, total > 0, barWidth >= 5 {
                let filled = Int(Double(barWidth) * Double(progress.completedBytes) / Double(total))
                bar =
                    " [" + String(repeating: "=", count: min(filled, barWidth))
                    + String(repeating: " ", count: max(0, barWidth - filled)) + "]"
            }
            write("\r\u{1B}[K" + label + bar + tail)
            barShown = true
        }
    }

    private func write(_ text: String) { FileHandle.standardError.write(Data(text.utf8)) }

    /// Binary units, three significant figures: `512 B`, `1.50 KiB`, `12.3 MiB`, `1.00 GiB`.
    static func size(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(bytes) B" }
        let digits = value < 10 ? 2 : value < 100 ? 1 : 0
        return String(format: "%.\(digits)f", value) + " " + units[unit]
    }

    static func percent(_ part: Int64, _ total: Int64) -> String {
        total == 0 ? "100%" : "\(Int(Double(part) * 100 / Double(total)))%"
    }

    /// `m:ss`, or `h:mm:ss` past an hour.
    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        let (hours, minutes, rest) = (whole / 3600, whole / 60 % 60, whole % 60)
        return hours > 0
            ? String(format: "%d:%02d:%02d", hours, minutes, rest) : String(format: "%d:%02d", minutes, rest)
    }

    static func seconds(_ duration: Duration) -> String {
        let value = duration.seconds
        return value < 1 ? "\(Int(value * 1000)) ms" : String(format: "%.3g s", value)
    }
}
