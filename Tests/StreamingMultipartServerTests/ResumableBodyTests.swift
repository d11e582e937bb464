import Foundation
import MultipartTestSupport
import NIOCore
import StreamingMultipart
import StreamingMultipartServer
import Testing

/// One resumable upload's body: requests feed it in turn, each from the offset its reader got to, and the reader sees
/// one stream.
@Suite struct ResumableBodyTests {
    struct Dropped: Error {}

    /// A request's body that the test feeds by hand.
    func request() -> (
        AsyncThrowingStream<ByteBuffer, any Error>, AsyncThrowingStream<ByteBuffer, any Error>.Continuation
    ) {
        AsyncThrowingStream.makeStream(of: ByteBuffer.self)
    }

    /// Pauses `body`: its creation request sends `text` and drops.
    func pause(_ body: ResumableBody, after text: String) async {
        let (creation, creationFeed) = request()
        creationFeed.yield(ByteBuffer(string: text))
        creationFeed.finish(throwing: Dropped())
        await #expect(throws: Dropped.self) { try await body.append(from: 0, creation, completes: true) }
    }

    func readAll(_ body: ResumableBody) -> Task<String, any Error> {
        Task {
            var text = ""
            for try await chunk in body { text += String(buffer: chunk) }
            return text
        }
    }

    /// The creation request drops after "hello "; an append from a stale offset is refused with the right one and
    /// the upload kept; the append from there completes it, and the reader read "hello world" once.
    @Test func anAppendFromTheReadersOffsetCompletesTheBody() async throws {
        let body = ResumableBody(window: .seconds(60))
        let reading = readAll(body)
        await pause(body, after: "hello ")
        #expect(body.offset == 6 && !body.isOver)

        let (stale, staleFeed) = request()
        staleFeed.finish()
        await #expect(throws: ResumableBody.Refusal.conflict(offset: 6)) {
            try await body.append(from: 3, stale, completes: true)
        }
        let (append, appendFeed) = request()
        appendFeed.yield(ByteBuffer(string: "wor"))
        appendFeed.yield(ByteBuffer(string: "ld"))
        appendFeed.finish()
        try await body.append(from: 6, append, completes: true)
        #expect(try await reading.value == "hello world")
        #expect(body.offset == 11 && body.isOver)
    }

    /// A request that does not complete the upload (`Upload-Complete: ?0`) leaves it waiting for the next.
    @Test func anAppendThatDoesNotCompleteLeavesTheBodyWaiting() async throws {
        let body = ResumableBody(window: .seconds(60))
        let reading = readAll(body)
        for (offset, text, completes) in [(0, "a", false), (1, "bc", false), (3, "d", true)] {
            let (part, feed) = request()
            feed.yield(ByteBuffer(string: text))
            feed.finish()
            try await body.append(from: Int64(offset), part, completes: completes)
        }
        #expect(try await reading.value == "abcd")
    }

    /// Whether `condition` holds once the tasks a clock's move woke have run: the test yields to them, a bounded
    /// number of times, and reads no clock.
    func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<100_000 where !condition() { await Task.yield() }
        return condition()
    }

    /// No append within the window: the reader fails as abandoned (408), and a late append finds the upload over.
    @Test func anAbandonedUploadFailsItsReaderAfterTheWindow() async throws {
        let clock = ManualClock()
        let body = ResumableBody(window: .seconds(60), clock: clock)
        let reading = readAll(body)
        await pause(body, after: "part")
        await clock.waitForSleepers(2)  // the lifetime and the window
        clock.advance(by: .seconds(59))
        #expect(!body.isOver)
        clock.advance(by: .seconds(1))
        if !(await eventually { body.isOver }) { body.cancel() }  // a window that never passes fails, not hangs
        let error = await #expect(throws: MultipartError.self) { try await reading.value }
        #expect(error?.code == .timedOut && error?.httpStatus == 408)
        #expect(error?.message.contains("abandoned") == true)
        let (late, lateFeed) = request()
        lateFeed.finish()
        await #expect(throws: ResumableBody.Refusal.ended) { try await body.append(from: 4, late, completes: true) }
    }

    /// Appends without bytes (a `PATCH` of `Upload-Complete: ?0` and no body, 200 bytes of headers) do not start a
    /// new window: five of them, 100 s apart on the test's clock, past a 300 s window, leave the upload abandoned,
    /// where each used to restart the window and keep the upload (its slot, its spool file, its disk) alive for good.
    @Test func appendsWithoutBytesDoNotKeepAnUploadAlive() async throws {
        let clock = ManualClock()
        let body = ResumableBody(window: .seconds(300), clock: clock)
        let reading = readAll(body)
        await pause(body, after: "part")
        await clock.waitForSleepers(2)  // the lifetime and the window
        var refused = false
        for step in 1...5 {
            clock.advance(by: .seconds(100))
            if step == 3 { #expect(await eventually { body.isOver }, "the window passed, and empty appends kept it") }
            let (empty, emptyFeed) = request()
            emptyFeed.finish()
            do {
                try await body.append(from: 4, empty, completes: false)
            } catch ResumableBody.Refusal.ended {
                refused = true
            }
        }
        #expect(refused, "an empty append was still taken after the window")
        if !body.isOver { body.cancel() }  // so that a body the appends kept alive fails the test, not hangs it
        let error = await #expect(throws: MultipartError.self) { try await reading.value }
        #expect(error?.code == .timedOut && error?.message.contains("abandoned") == true)
    }

    /// An append that brings bytes starts a new window, but no upload outlives its lifetime: appends of a byte
    /// every 100 s on the test's clock keep a 1,000 s window open, and the 300 s lifetime ends the upload all the
    /// same.
    @Test func anUploadEndsAtItsLifetimeHoweverItIsFed() async throws {
        let clock = ManualClock()
        let body = ResumableBody(window: .seconds(1000), lifetime: .seconds(300), clock: clock)
        let reading = readAll(body)
        await clock.waitForSleepers(1)  // the lifetime
        var offset: Int64 = 0
        var ended = false
        for step in 1...6 where !ended {
            let (append, feed) = request()
            feed.yield(ByteBuffer(string: "x"))
            feed.finish()
            do {
                try await body.append(from: offset, append, completes: false)
                offset += 1
            } catch ResumableBody.Refusal.ended {
                ended = true
            }
            clock.advance(by: .seconds(100))
            if step == 3 { #expect(await eventually { body.isOver }, "the upload outlived its lifetime") }
        }
        #expect(ended && offset == 3)
        if !body.isOver { body.cancel() }  // so that a body that outlived its lifetime fails the test, not hangs it
        let error = await #expect(throws: MultipartError.self) { try await reading.value }
        #expect(error?.code == .timedOut && error?.message.contains("lifetime") == true, "\(error!)")
        #expect(body.isOver)
    }

    /// A cut (the admission making room) fails a paused upload at once, not at a next buffer it never gets.
    @Test func aCutEndsAPausedUploadAtOnce() async throws {
        let body = ResumableBody(window: .seconds(600))
        let reading = readAll(body)
        await pause(body, after: "part")
        body.cut()
        let error = await #expect(throws: MultipartError.self) { try await reading.value }
        #expect(error?.code == .cancelled && error?.message.contains("make room") == true)
    }

    /// The client's own `DELETE` cuts off the request still feeding the upload (its connection is closed) and the
    /// route's answer belongs to no request: nobody is told `503 cancelled` for a cancellation the client asked for.
    @Test func theClientsCancelCutsOffItsFeedingRequest() async throws {
        let body = ResumableBody(window: .seconds(600))
        let reading = readAll(body)
        let (creation, creationFeed) = request()
        creationFeed.yield(ByteBuffer(string: "part"))
        let closed = Locked(false)
        // The server closes the feeding request's connection: its body ends, and the reader's wait on it with it.
        let feeding = Task {
            try await body.append(from: 0, creation, completes: true) {
                closed.set(true)
                creationFeed.finish(throwing: Dropped())
            }
        }
        while body.offset < 4 { try await Task.sleep(for: .milliseconds(5)) }
        body.cancelByClient()
        await #expect(throws: ResumableBody.Refusal.self) { try await feeding.value }
        #expect(closed.get() && body.answeringSegment == nil)
        let error = await #expect(throws: MultipartError.self) { try await reading.value }
        #expect(error?.code == .cancelled)
    }

    /// A client that resumes before the server noticed the old connection died takes the upload over: the old
    /// request's next bytes are refused, never read.
    @Test func aNewAppendTakesOverFromARequestStillAttached() async throws {
        let body = ResumableBody(window: .seconds(60))
        let reading = readAll(body)
        let (old, oldFeed) = request()
        oldFeed.yield(ByteBuffer(string: "hello "))
        let cutOff = Locked(false)
        // A server closes the old request's connection: its body ends, and the reader's wait on it with it.
        let oldRequest = Task {
            try await body.append(from: 0, old, completes: true) {
                cutOff.set(true)
                oldFeed.yield(ByteBuffer(string: "stale bytes"))
                oldFeed.finish(throwing: Dropped())
            }
        }
        while body.offset < 6 { await Task.yield() }  // the reader takes it; no clock involved

        let (new, newFeed) = request()
        newFeed.yield(ByteBuffer(string: "world"))
        newFeed.finish()
        let newRequest = Task { try await body.append(from: 6, new, completes: true) }
        try await newRequest.value
        #expect(cutOff.get())
        await #expect(throws: ResumableBody.Refusal.superseded) { try await oldRequest.value }
        #expect(try await reading.value == "hello world")
    }

    /// The client asks the offset while its old request's connection is still open (half-open, say): the request
    /// gets the grace to end on its own, on the body's clock; when it passes, the request is cut off and adds
    /// nothing more, so the offset answered is where the append starts.
    @Test func askingTheOffsetCutsOffAHalfOpenRequestWhenTheGracePasses() async throws {
        let clock = ManualClock()
        let body = ResumableBody(window: .seconds(60), clock: clock)
        let reading = readAll(body)
        let (old, oldFeed) = request()
        oldFeed.yield(ByteBuffer(string: "hello "))
        let cutOff = Locked(false)
        let oldRequest = Task {
            try await body.append(from: 0, old, completes: true) {
                cutOff.set(true)
                oldFeed.yield(ByteBuffer(string: "late"))
                oldFeed.finish()
            }
        }
        while body.offset < 6 { await Task.yield() }
        let asking = Task { await body.takeOver(after: .seconds(1)) }
        await clock.waitForSleepers(2)  // the lifetime, and the grace
        clock.advance(by: .milliseconds(999))
        for _ in 0..<1000 { await Task.yield() }
        #expect(!cutOff.get(), "cut off before the grace passed")
        clock.advance(by: .milliseconds(1))
        await asking.value
        await #expect(throws: ResumableBody.Refusal.superseded) { try await oldRequest.value }
        #expect(body.offset == 6 && !body.isOver)
        let (new, newFeed) = request()
        newFeed.yield(ByteBuffer(string: "world"))
        newFeed.finish()
        try await body.append(from: 6, new, completes: true)
        #expect(try await reading.value == "hello world")
    }

    /// The client asks the offset as its old request's connection drops with bytes still in the server's buffers:
    /// the reader takes them before the offset is answered, so the client does not send them again; the answer
    /// comes as the request ends, not when the grace passes (the test's clock never moves).
    @Test func askingTheOffsetLetsADroppedRequestsLastBytesIn() async throws {
        let clock = ManualClock()
        let body = ResumableBody(window: .seconds(60), clock: clock)
        let reading = readAll(body)
        let (old, oldFeed) = request()
        oldFeed.yield(ByteBuffer(string: "hello "))
        let oldRequest = Task { try await body.append(from: 0, old, completes: true) }
        while body.offset < 6 { await Task.yield() }
        let asking = Task {
            await body.takeOver(after: .seconds(1))
            return body.offset
        }
        await clock.waitForSleepers(2)  // the lifetime, and the grace
        oldFeed.yield(ByteBuffer(string: "wor"))  // in the buffers when the connection dropped
        oldFeed.finish(throwing: Dropped())
        #expect(await asking.value == 9)
        await #expect(throws: Dropped.self) { try await oldRequest.value }
        let (new, newFeed) = request()
        newFeed.yield(ByteBuffer(string: "ld"))
        newFeed.finish()
        try await body.append(from: 9, new, completes: true)
        #expect(try await reading.value == "hello world")
    }

    /// A reader that stops (its route answered an error) ends the upload for its senders; `cancel()` fails the
    /// reader.
    @Test func aReaderThatStopsOrACancelEndsTheUpload() async throws {
        let body = ResumableBody(window: .seconds(60))
        let firstChunk = Task {
            var iterator = body.makeAsyncIterator()
            return try await iterator.next().map { String(buffer: $0) }
        }
        let (creation, creationFeed) = request()
        creationFeed.yield(ByteBuffer(string: "one"))
        creationFeed.yield(ByteBuffer(string: "two"))
        creationFeed.finish()
        await #expect(throws: ResumableBody.Refusal.ended) { try await body.append(from: 0, creation, completes: true) }
        #expect(try await firstChunk.value == "one")

        let cancelled = ResumableBody(window: .seconds(60))
        let reading = readAll(cancelled)
        cancelled.cancel()
        let error = await #expect(throws: MultipartError.self) { try await reading.value }
        #expect(error?.code == .cancelled)
    }
}

/// The body as the spooler reads it: a pause while the client reconnects is not a slow client.
@Suite struct ResumableBodySpoolTests {
    static let boundary = "resume-boundary"

    /// The file's size: each half of the form (200 KB) is more than a window of the spool's rule asks (160 KB).
    static let fileSize = 400_000

    /// A form of one field and one file of ``fileSize`` bytes, in two halves.
    func halves() -> (ByteBuffer, ByteBuffer) {
        var body = ByteBuffer()
        body.writeString("--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nhello\r\n")
        body.writeString(
            "--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n\r\n")
        body.writeBytes((0..<Self.fileSize).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        body.writeString("\r\n--\(Self.boundary)--\r\n")
        let half = body.readableBytes / 2
        return (body.getSlice(at: 0, length: half)!, body.getSlice(at: half, length: body.readableBytes - half)!)
    }

    /// Spools `body` into `folder` under a body timeout of 20 KB/s over 8 s windows (160 KB a window) on `clock`;
    /// the task's value is the caption and the file's size. The first half (200 KB) fills the first window, so a
    /// pause counted as the client's shows in the windows after it.
    func spool(_ body: ResumableBody, into folder: TemporaryFolder, clock: ManualClock)
        -> Task<(String?, Int64?), any Error>
    {
        var limits = MultipartSpooler.Limits()
        limits.bodyTimeout = MultipartBodyTimeout(minimumBytesPerSecond: 20_000, window: .seconds(8))
        var spooler = MultipartSpooler(directory: folder.url.path, limits: limits)
        spooler.clock = clock
        return Task {
            try await spooler.withSpooledForm(body, contentType: "multipart/form-data; boundary=\(Self.boundary)") {
                form in (form.fields.first?.value, form.files.first?.byteCount)
            }
        }
    }

    /// The creation request drops halfway; the append comes 17 s later on the test's clock, past the end of the
    /// second window: the spool does not time out, and the form is whole.
    @Test func aPausedUploadIsNotCutByTheBodyTimeout() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (first, second) = halves()
        let clock = ManualClock()
        let body = ResumableBody(window: .seconds(60), clock: clock)
        let spooling = spool(body, into: folder, clock: clock)
        let (creation, creationFeed) = AsyncThrowingStream.makeStream(of: ByteBuffer.self)
        creationFeed.yield(first)
        creationFeed.finish(throwing: ResumableBodyTests.Dropped())
        await #expect(throws: ResumableBodyTests.Dropped.self) {
            try await body.append(from: 0, creation, completes: true)
        }
        // The reader took the first half and waits for the client: the body's window and the spool's watchdog sleep.
        while !body.readerWaits { await Task.yield() }
        await clock.waitForSleepers(2)
        for _ in 0..<17 { clock.advance(by: .seconds(1)) }
        #expect(!body.isOver)
        let (append, appendFeed) = AsyncThrowingStream.makeStream(of: ByteBuffer.self)
        appendFeed.yield(second)
        appendFeed.finish()
        do {
            try await body.append(from: Int64(first.readableBytes), append, completes: true)
        } catch ResumableBody.Refusal.ended {
            // The spool stops at the close delimiter, before the request's end: the reader went away, its work done.
        }
        let (caption, size) = try await spooling.value
        #expect(caption == "hello" && size == Int64(Self.fileSize))
    }

    /// A request that stays attached and sends nothing is a slow client: the body timeout cuts it when the second
    /// window passes without its bytes, on the test's clock.
    @Test func anAttachedRequestThatStallsIsStillCut() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (first, _) = halves()
        let clock = ManualClock()
        let body = ResumableBody(window: .seconds(60), clock: clock)
        let spooling = spool(body, into: folder, clock: clock)
        let (creation, creationFeed) = AsyncThrowingStream.makeStream(of: ByteBuffer.self)
        creationFeed.yield(first)
        let feeding = Task { try await body.append(from: 0, creation, completes: true) }
        while body.offset < Int64(first.readableBytes) { await Task.yield() }
        await clock.waitForSleepers(1)  // the watchdog
        clock.advance(by: .seconds(15))
        #expect(!body.isOver)  // the first window had its bytes; the second is not over
        clock.advance(by: .seconds(1))
        // A write of the first half still under way pauses the rule (the server's time is not the client's), and
        // the second window then ends later: the clock moves on, a second at a time, until the cut comes. Moved
        // once, a busy machine's slow write left the spool waiting for ever.
        let ticking = Task {
            while !Task.isCancelled {
                if clock.sleeperCount > 0 { clock.advance(by: .seconds(1)) }
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
        defer { ticking.cancel() }
        let error = await #expect(throws: MultipartError.self) { try await spooling.value }
        #expect(error?.code == .timedOut)
        creationFeed.finish()
        await #expect(throws: ResumableBody.Refusal.ended) { try await feeding.value }
    }
}

extension ResumableBodyTests {
    /// A server shutting down fails a paused upload at once, and one being fed when its request drops.
    @Test func aShutdownEndsPausedUploadsAtOnce() async throws {
        let paused = ResumableBody(window: .seconds(600))
        let pausedReading = readAll(paused)
        await pause(paused, after: "some")
        paused.shutDown()
        let error = await #expect(throws: MultipartError.self) { try await pausedReading.value }
        #expect(error?.code == .cancelled && error?.message.contains("shut down") == true)

        let feeding = ResumableBody(window: .seconds(600))
        let feedingReading = readAll(feeding)
        let (second, secondFeed) = request()
        secondFeed.yield(ByteBuffer(string: "more"))
        let sending = Task { try await feeding.append(from: 0, second, completes: true) }
        while feeding.offset < 4 { await Task.yield() }
        feeding.shutDown()
        #expect(!feeding.isOver, "a request that is still sending may finish")
        secondFeed.finish(throwing: Dropped())
        await #expect(throws: Dropped.self) { try await sending.value }
        await #expect(throws: MultipartError.self) { try await feedingReading.value }
    }
}
