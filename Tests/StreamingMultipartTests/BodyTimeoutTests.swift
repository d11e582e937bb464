import Foundation
import MultipartTestSupport
import Testing

@testable import StreamingMultipart

/// A slow client is cut: the body's minimum rate over each window and its deadline (``MultipartBodyTimeout``), in the
/// rule itself (on instants the test chooses: no clock is read), in the async parts (checked as chunks arrive) and
/// in the spooler (a watchdog that cuts a client that stops sending altogether).
@Suite struct BodyTimeoutTests {
    // MARK: The rule, on chosen instants

    static let start = ContinuousClock.now

    static func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test func aTrickleFailsAtTheEndOfTheFirstWindowThatMissesItsBytes() throws {
        // 100 bytes a second over 1 s windows: 100 bytes a window.
        var clock = BodyClock(MultipartBodyTimeout(minimumBytesPerSecond: 100, window: .seconds(1)))
        clock.begin(at: Self.at(0))
        try clock.received(150, at: Self.at(500))  // window 1 has its bytes
        try clock.received(60, at: Self.at(1500))  // window 2, so far 60
        #expect(clock.breaksAt(now: Self.at(1500)) == Self.at(2000))
        try clock.received(40, at: Self.at(1900))  // window 2 has its 100
        #expect(clock.breaksAt(now: Self.at(1900)) == Self.at(3000))  // window 3 may bring nothing only until its end
        #expect(throws: Never.self) { try clock.check(at: Self.at(2999)) }
        let error = #expect(throws: MultipartError.self) { try clock.received(1, at: Self.at(3000)) }
        #expect(error?.code == .timedOut)
        #expect(error?.message.contains("0 bytes in 1.0 seconds") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("minimumBytesPerSecond (100") == true)
        #expect(error?.offset == 250)
    }

    @Test func theDeadlineBoundsTheWholeBodyHoweverFastItArrives() throws {
        var clock = BodyClock(
            MultipartBodyTimeout(minimumBytesPerSecond: 1, window: .seconds(1), deadline: .seconds(3)))
        clock.begin(at: Self.at(0))
        for second in 0..<3 { try clock.received(1 << 20, at: Self.at(second * 1000 + 999)) }
        #expect(clock.breaksAt(now: Self.at(2999)) <= Self.at(3001))
        let error = #expect(throws: MultipartError.self) { try clock.received(1 << 20, at: Self.at(3001)) }
        #expect(error?.message.contains("deadline (3.0 seconds)") == true, "\(error?.message ?? "")")
    }

    @Test func waitsOnTheStoreDoNotCountAgainstTheRateButDoAgainstTheDeadline() throws {
        // The spooler waits on its store (a part going up) and reads nothing meanwhile: not the client's fault.
        var clock = BodyClock(
            MultipartBodyTimeout(minimumBytesPerSecond: 100, window: .seconds(1), deadline: .seconds(30)))
        clock.begin(at: Self.at(0))
        try clock.received(60, at: Self.at(300))
        clock.pause(at: Self.at(400))
        #expect(throws: Never.self) { try clock.check(at: Self.at(20_000)) }  // 19.6 s waiting
        #expect(clock.breaksAt(now: Self.at(20_000)) == Self.at(21_000))
        clock.resume(at: Self.at(20_000))
        // The window that was open goes on with 0.6 s left, and 40 bytes still owed.
        try clock.received(40, at: Self.at(20_500))
        #expect(clock.breaksAt(now: Self.at(20_500)) == Self.at(21_600))
        let slow = #expect(throws: MultipartError.self) { try clock.check(at: Self.at(21_600)) }
        #expect(slow?.message.contains("0 bytes in 1.0 seconds") == true, "\(slow?.message ?? "")")

        var bounded = BodyClock(
            MultipartBodyTimeout(minimumBytesPerSecond: 100, window: .seconds(1), deadline: .seconds(3)))
        bounded.begin(at: Self.at(0))
        bounded.pause(at: Self.at(100))
        #expect(bounded.breaksAt(now: Self.at(2_500)) == Self.at(3_000) + .nanoseconds(1))
        let late = #expect(throws: MultipartError.self) { try bounded.check(at: Self.at(3_001)) }
        #expect(late?.message.contains("deadline") == true)
    }

    @Test func theClockStartsAtTheFirstPullNotBefore() throws {
        // A server too busy to pull for a while is not the client's fault.
        var clock = BodyClock(MultipartBodyTimeout(minimumBytesPerSecond: 100, window: .seconds(1)))
        #expect(throws: Never.self) { try clock.check(at: Self.at(60_000)) }
        clock.begin(at: Self.at(60_000))
        try clock.received(100, at: Self.at(60_900))
        #expect(throws: Never.self) { try clock.check(at: Self.at(61_000)) }
    }

    @Test func aRuleThatCannotBeIsRefused() {
        for rule in [
            MultipartBodyTimeout(minimumBytesPerSecond: 0), MultipartBodyTimeout(window: .zero),
            MultipartBodyTimeout(deadline: .seconds(-1)),
        ] {
            #expect(throws: MultipartError.self) { try rule.validate() }
        }
    }

    // MARK: Real sources, on the test's clock

    /// A form of one field and one 40,000-byte file, the file sent `bytesPerTick` bytes every `tick` of `clock` (the
    /// source moves the clock on by a tick before each chunk: a client whose chunks arrive that far apart), or cut
    /// after `stopAfter` bytes by a source that then never sends again: it moves the clock on an hour and waits on
    /// it until its task is cancelled. No wall time passes, so a loaded machine changes nothing.
    struct SlowUpload: AsyncSequence, Sendable {
        static let boundary = "slow"
        static let head = Array(
            "--slow\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n--slow\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f.bin\"\r\n\r\n"
                .utf8)
        var bytesPerTick: Int
        var tick: Duration
        var stopAfter: Int? = nil
        let clock: ManualClock

        struct AsyncIterator: AsyncIteratorProtocol {
            let upload: SlowUpload
            var sent = 0
            var headSent = false

            mutating func next() async throws -> [UInt8]? {
                if !headSent {
                    headSent = true
                    return SlowUpload.head
                }
                if let stop = upload.stopAfter, sent >= stop {
                    upload.clock.advance(by: .seconds(3600))
                    try await upload.clock.sleep(for: .seconds(3600))  // a client that stopped: ends when cancelled
                }
                guard sent < 40_000 else { return sent == 40_000 ? finish() : nil }
                upload.clock.advance(by: upload.tick)
                sent += upload.bytesPerTick
                return [UInt8](repeating: 7, count: upload.bytesPerTick)
            }

            mutating func finish() -> [UInt8] {
                sent += 1
                return Array("\r\n--slow--\r\n".utf8)
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(upload: self) }
    }

    static let contentType = "multipart/form-data; boundary=\(SlowUpload.boundary)"

    static func spool(_ upload: SlowUpload, timeout: MultipartBodyTimeout?, in folder: TemporaryFolder)
        async throws -> SpooledForm
    {
        var limits = MultipartSpooler.Limits.default
        limits.bodyTimeout = timeout
        var spooler = MultipartSpooler(directory: folder.url, limits: limits)
        spooler.clock = upload.clock
        return try await spooler.spool(upload, contentType: contentType)
    }

    @Test func theSpoolerCutsATrickleAndLeavesNothing() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        // 10 bytes every 20 ms is 500 bytes a second, under the 10,000 the rule asks over each 300 ms window.
        let trickle = SlowUpload(bytesPerTick: 10, tick: .milliseconds(20), clock: ManualClock())
        let error = await #expect(throws: MultipartError.self) {
            try await Self.spool(
                trickle, timeout: MultipartBodyTimeout(minimumBytesPerSecond: 10_000, window: .milliseconds(300)),
                in: folder)
        }
        #expect(error?.code == .timedOut)
        #expect(error?.httpStatus == 408)
        #expect(error?.message.contains("below minimumBytesPerSecond") == true, "\(error?.message ?? "")")
        #expect(try folder.contents() == [])
    }

    /// The same on the continuous clock, where the watchdog is an alarm of the one sleep queue, not a task: a body
    /// that sends half a file and then waits forever is cut, and its file removed. (No duration is read: a broken
    /// alarm hangs the test until its time limit.)
    @Test(.timeLimit(.minutes(1)))
    func theContinuousClocksAlarmCutsAStalledBody() async throws {
        struct Stalled: AsyncSequence, Sendable {
            struct AsyncIterator: AsyncIteratorProtocol {
                var sent = false
                mutating func next() async throws -> [UInt8]? {
                    guard sent else {
                        sent = true
                        return Array(
                            "--\(SlowUpload.boundary)\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a\"\r\n\r\n"
                                .utf8) + [UInt8](repeating: 7, count: 4096)
                    }
                    try await Task.sleep(for: .seconds(3600))  // until the watchdog's cancel
                    return nil
                }
            }
            func makeAsyncIterator() -> AsyncIterator { AsyncIterator() }
        }
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var limits = MultipartSpooler.Limits.default
        limits.bodyTimeout = MultipartBodyTimeout(minimumBytesPerSecond: 1000, window: .milliseconds(200))
        let spooler = MultipartSpooler(directory: folder.url, limits: limits)
        let error = await #expect(throws: MultipartError.self) {
            try await spooler.spool(Stalled(), contentType: Self.contentType)
        }
        #expect(error?.code == .timedOut, "\(String(describing: error))")
        #expect(try folder.contents() == [])
    }

    @Test func theSpoolerCutsAClientThatStopsSendingAndLeavesNothing() async throws {
        // Half the file, then nothing: the source's next() never returns until its task is cancelled. Idle
        // timeouts restart on every chunk; this is the case that only a watchdog beside the read can cut.
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let stalled = SlowUpload(bytesPerTick: 1000, tick: .milliseconds(1), stopAfter: 20_000, clock: ManualClock())
        let error = await #expect(throws: MultipartError.self) {
            try await Self.spool(
                stalled, timeout: MultipartBodyTimeout(minimumBytesPerSecond: 1000, window: .milliseconds(300)),
                in: folder)
        }
        #expect(error?.code == .timedOut)
        #expect(error?.message.contains("the body sent 0 bytes in 0.3 seconds") == true, "\(error?.message ?? "")")
        #expect(try folder.contents() == [])
    }

    @Test func theDeadlineCutsABodyThatKeepsItsRate() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        // 100 kB/s, 0.4 s for the file.
        let steady = SlowUpload(bytesPerTick: 1000, tick: .milliseconds(10), clock: ManualClock())
        let error = await #expect(throws: MultipartError.self) {
            try await Self.spool(
                steady, timeout: MultipartBodyTimeout(minimumBytesPerSecond: 1, deadline: .milliseconds(100)),
                in: folder)
        }
        #expect(error?.message.contains("deadline") == true, "\(error?.message ?? "")")
        #expect(try folder.contents() == [])
    }

    @Test func aBodyThatKeepsItsRateIsSpooled() async throws {
        // 1,000 bytes every 10 ms is 100 kB/s, over the 90 kB/s asked of each 100 ms window.
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let steady = SlowUpload(bytesPerTick: 1000, tick: .milliseconds(10), clock: ManualClock())
        let rule = MultipartBodyTimeout(minimumBytesPerSecond: 90_000, window: .milliseconds(100))
        let form = try await Self.spool(steady, timeout: rule, in: folder)
        #expect(form.files.first?.byteCount == 40_000)
        form.removeFiles()
    }

    @Test func theAsyncPartsCutATrickleAsItsChunksArrive() async throws {
        let clock = ManualClock()
        let trickle = SlowUpload(bytesPerTick: 10, tick: .milliseconds(20), clock: clock)
        let rule = MultipartBodyTimeout(minimumBytesPerSecond: 10_000, window: .milliseconds(300))
        var parts = try trickle.multipartParts(contentType: Self.contentType, timeout: rule)
        parts.watchdog = BodyWatchdog(rule, clock: clock)
        let error = await #expect(throws: MultipartError.self) {
            for try await part in parts {
                for try await _ in part.body {}
            }
        }
        #expect(error?.code == .timedOut)
    }
}
