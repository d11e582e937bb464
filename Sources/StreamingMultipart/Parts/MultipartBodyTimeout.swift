/// How slowly a request body may arrive: a minimum rate over each window, and optionally a deadline for the whole
/// body, as nginx (`client_body_timeout`) and Apache's `mod_reqtimeout` (`MinRate`) bound them.
///
/// A server's idle timeout restarts on every chunk, so a client that trickles a byte every few seconds keeps a
/// connection, a task and an open spool file for as long as it likes. The rule here does not restart: the body
/// fails with ``MultipartError/Code/timedOut`` (HTTP 408) when fewer than `minimumBytesPerSecond × window` bytes
/// arrived in a window, counted in consecutive windows from the first pull, or when it has taken longer than
/// `deadline`.
///
/// While a ``MultipartSpooler`` waits on its ``MultipartFileStore`` (a part going up to object storage), it reads
/// nothing, so the client cannot send: those waits do not count against the rate, only against the deadline.
///
/// ```swift
/// var limits = MultipartSpooler.Limits.default
/// limits.bodyTimeout = MultipartBodyTimeout(minimumBytesPerSecond: 1024, window: .seconds(10), deadline: .seconds(600))
/// ```
///
/// ``MultipartSpooler`` enforces it with a watchdog beside the spool, which cancels the spool's task at once when
/// the rule is broken, so a client that stops sending altogether is cut too (the body's `next()` must end when its
/// task is cancelled, as NIO's, Hummingbird's and Vapor's bodies and `AsyncStream` do). The async parts
/// (`multipartParts(…, timeout:)`) check it as each chunk arrives: that stops a trickle, not a source that never
/// delivers its next chunk, since a sequence cannot cancel the task that iterates it.
public struct MultipartBodyTimeout: Sendable, Hashable {
    /// The fewest bytes a second the body may average over each window. At least 1.
    public var minimumBytesPerSecond: Int
    /// The length of the windows the rate is measured over. Above zero.
    public var window: Duration
    /// The most time the whole body may take, from the first pull; nil for no limit. Above zero.
    public var deadline: Duration?

    public init(minimumBytesPerSecond: Int = 500, window: Duration = .seconds(20), deadline: Duration? = nil) {
        self.minimumBytesPerSecond = minimumBytesPerSecond
        self.window = window
        self.deadline = deadline
    }

    /// 500 bytes a second over 20-second windows and no deadline: Apache's default (`body=20,MinRate=500`).
    public static let `default` = MultipartBodyTimeout()

    /// The bytes each window must bring.
    var bytesPerWindow: Int64 {
        Int64((Double(minimumBytesPerSecond) * window.seconds).rounded(.up))
    }

    /// Checks that the rate is at least 1 and the window and deadline above zero.
    ///
    /// - Throws: ``MultipartError/Code/invalidLimit`` naming the first that is not.
    public func validate() throws {
        guard minimumBytesPerSecond >= 1 else {
            throw MultipartError(
                code: .invalidLimit, message: "minimumBytesPerSecond must be at least 1, got \(minimumBytesPerSecond)")
        }
        guard window > .zero else {
            throw MultipartError(code: .invalidLimit, message: "the body timeout's window must be above zero")
        }
        if let deadline, deadline <= .zero {
            throw MultipartError(code: .invalidLimit, message: "the body timeout's deadline must be above zero")
        }
    }
}

/// Where a body stands against its ``MultipartBodyTimeout``: the current window and the bytes so far, counted from
/// the first pull (before it, the server has not asked for anything, and a busy server's delay is not the client's).
struct BodyClock: Sendable {
    let rule: MultipartBodyTimeout
    /// When the first pull began; nil before it.
    private var start: ContinuousClock.Instant?
    private var windowStart: ContinuousClock.Instant = .now
    /// The body's bytes when the current window began.
    private var bytesAtWindowStart: Int64 = 0
    private(set) var bytes: Int64 = 0
    /// When the reader stopped reading to wait on something else (a store), while it waits.
    private var pausedAt: ContinuousClock.Instant?

    init(_ rule: MultipartBodyTimeout) { self.rule = rule }

    /// The reader waits on something other than the client: the rate's window stops until ``resume(at:)``.
    mutating func pause(at now: ContinuousClock.Instant = .now) {
        guard start != nil, pausedAt == nil else { return }
        pausedAt = now
    }

    /// The reader reads again: the window goes on from where it stopped.
    mutating func resume(at now: ContinuousClock.Instant = .now) {
        guard let pausedAt else { return }
        windowStart += now - pausedAt
        self.pausedAt = nil
    }

    /// Starts the clock at the first pull; later calls change nothing.
    mutating func begin(at now: ContinuousClock.Instant = .now) {
        guard start == nil else { return }
        start = now
        windowStart = now
    }

    /// Counts `count` more bytes, arrived at `now`, and checks the rule.
    ///
    /// - Throws: ``MultipartError/Code/timedOut``.
    mutating func received(_ count: Int, at now: ContinuousClock.Instant = .now) throws {
        begin(at: now)
        try check(at: now)  // the windows that ended before these bytes came
        bytes += Int64(count)
    }

    /// Checks the rule at `now`, rolling the window forward over every window that has ended.
    ///
    /// - Throws: ``MultipartError/Code/timedOut`` naming the rule that was broken.
    mutating func check(at now: ContinuousClock.Instant = .now) throws {
        guard let start else { return }
        if let deadline = rule.deadline, now - start > deadline {
            throw MultipartError(
                code: .timedOut,
                message: "the body took longer than its deadline (\(deadline)); \(bytes) bytes had arrived",
                offset: bytes)
        }
        guard pausedAt == nil else { return }
        while now - windowStart >= rule.window {
            let arrived = bytes - bytesAtWindowStart
            guard arrived >= rule.bytesPerWindow else {
                throw MultipartError(
                    code: .timedOut,
                    message: "the body sent \(arrived) bytes in \(rule.window), below minimumBytesPerSecond "
                        + "(\(rule.minimumBytesPerSecond) bytes a second over each \(rule.window))",
                    offset: bytes)
            }
            windowStart += rule.window
            bytesAtWindowStart = bytes
        }
    }

    /// The earliest instant at which the rule breaks if no more bytes arrive: the end of the current window, or of
    /// the next one when this one has its bytes already, or the deadline. Before the first pull, a window from
    /// `now`: the watchdog looks again then.
    func breaksAt(now: ContinuousClock.Instant = .now) -> ContinuousClock.Instant {
        guard let start else { return now + rule.window }
        if pausedAt != nil {
            return min(now + rule.window, rule.deadline.map { start + $0 + .nanoseconds(1) } ?? now + rule.window)
        }
        let windowEnd = windowStart + rule.window
        let rateBreak = bytes - bytesAtWindowStart >= rule.bytesPerWindow ? windowEnd + rule.window : windowEnd
        guard let deadline = rule.deadline else { return rateBreak }
        return min(rateBreak, start + deadline + .nanoseconds(1))
    }
}
