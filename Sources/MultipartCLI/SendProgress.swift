import Foundation
import NIOConcurrencyHelpers
import StreamingMultipart

/// What `multipart send` shows on standard error while the body goes out: a bar redrawn in place on a terminal
/// (bytes, percentage, rate, time left, the part being sent), a plain line a second otherwise, or nothing.
///
/// Called from the task that reads the body; the lock, held while a line is written, keeps a retry notice and a
/// redraw from interleaving.
final class SendProgress: Sendable {
    private let style: SendCommand.ProgressStyle
    private let total: Int64?
    /// A label per part: its filename, else its field name.
    private let labels: [String]

    /// What the screen shows and when it was drawn: it changes together, under one lock.
    private struct Screen {
        var attemptStart = ContinuousClock.now
        var lastDraw: ContinuousClock.Instant?
        var latest: MultipartBody.Progress?
        /// Whether a bar is on the screen, its line not yet ended.
        var barShown = false
        var finished = false
    }

    private let screen: NIOLockedValueBox<Screen>

    init(style: SendCommand.ProgressStyle, body: MultipartBody) {
        self.style = style
        // Plain lines after a second: a short upload prints one.
        self.screen = NIOLockedValueBox(Screen(lastDraw: style == .plain ? .now : nil))
        self.total = body.contentLength
        self.labels = body.parts.map { part in
            let disposition = part.headers[.contentDisposition].flatMap { try? ContentDisposition(parsing: $0) }
            return disposition?.filename ?? disposition?.name ?? "?"
        }
    }

    /// Takes the body's progress; draws when the last drawing is old enough (10 a second for the bar, 1 for lines).
    func update(_ progress: MultipartBody.Progress) {
        screen.withLockedValue { screen in
            guard !screen.finished else { return }
            let now = ContinuousClock.now
            if let latest = screen.latest, progress.completedBytes < latest.completedBytes {
                screen.attemptStart = now  // a new attempt
            }
            screen.latest = progress
            let interval: Duration = style == .bar ? .milliseconds(100) : .seconds(1)
            if let lastDraw = screen.lastDraw, now - lastDraw < interval { return }
            screen.lastDraw = now
            draw(progress, now: now, on: &screen)
        }
    }

    /// A line between drawings (a retry notice), the bar redrawn after it.
    func note(_ message: String) {
        screen.withLockedValue { screen in
            var text = screen.barShown ? "\r\u{1B}[K" : ""
            text += "multipart: \(message)\n"
            screen.barShown = false
            write(text)
        }
    }

    /// Draws the last state and ends the bar's line; once.
    func finish() {
        screen.withLockedValue { screen in
            guard !screen.finished else { return }
            screen.finished = true
            guard let latest = screen.latest, style != .none else { return }
            draw(latest, now: .now, on: &screen)
            if style == .bar {
                write("\n")
                screen.barShown = false
            }
        }
    }

    private func draw(_ progress: MultipartBody.Progress, now: ContinuousClock.Instant, on screen: inout Screen) {
        let finished = screen.finished
        let elapsed = max((now - screen.attemptStart).seconds, 0.001)
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
            screen.barShown = true
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
