import ExampleTestSupport
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import Testing
import Vapor

@testable import StreamingMultipartVapor

/// `req.streamedBody`, the body sequence the form call reads. Vapor's own `req.body` stopped the fault harness's
/// Vapor server with a precondition failure in its delegate (`produceMore0` in its `noSignalReceived` state,
/// vapor/vapor#3153) after about 940 uploads; this one's pause takes an ask for more in any state, joins a second
/// pause to the first, and fails what waits once the route lets go.
@Suite(.timeLimit(.minutes(2))) struct StreamedBodyTests {
    /// Whether `future` has succeeded once the loop has run what was queued on it (an ask is carried out there).
    static func succeeded(_ future: EventLoopFuture<Void>, on loop: any EventLoop) async throws -> Bool {
        let done = NIOLockedValueBox(false)
        future.whenSuccess { done.withLockedValue { $0 = true } }
        try await loop.submit {}.get()
        return done.withLockedValue { $0 }
    }

    /// NIO's producer and the pause, as the body's drain drives them: 20 buffers unread stop the connection, a
    /// read below 5 asks for more and the pause ends; an ask with no pause (NIO's first, before any stop) changes
    /// nothing; a second pause joins the first; once the route lets go, what waits fails and so does a later pause.
    @Test func thePauseTakesEveryAskAndEveryPause() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let pause = ReadingPause(eventLoop: loop)
        let producer = NIOThrowingAsyncSequenceProducer.makeSequence(
            elementType: Int.self, failureType: (any Error).self,
            backPressureStrategy: NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark(
                lowWatermark: 5, highWatermark: 20),
            finishOnDeinit: true, delegate: pause)
        let source = producer.source
        let reader = producer.sequence.makeAsyncIterator()

        pause.produceMore()  // an ask while reading: nothing to end, nothing changes
        try await loop.submit {}.get()  // carried out on the loop, before the drain (which runs there) pauses
        for buffer in 0..<19 { #expect(source.yield(buffer) == .produceMore) }
        #expect(source.yield(19) == .stopProducing)
        let first = pause.begin()
        #expect(try await !Self.succeeded(first, on: loop), "the earlier ask ended a pause begun after it")
        for expected in 0..<15 { #expect(try await reader.next() == expected) }
        #expect(try await !Self.succeeded(first, on: loop), "5 unread: no ask yet")
        #expect(try await reader.next() == 15)
        #expect(try await Self.succeeded(first, on: loop), "4 unread: NIO asked, and reading goes on")

        pause.produceMore()  // a second ask, with no pause between: nothing changes (Vapor's stopped the process)
        try await loop.submit {}.get()
        for buffer in 20..<36 { _ = source.yield(buffer) }
        let second = pause.begin()
        let joined = pause.begin()  // the body stream wrote again before its pause ended
        #expect(try await !Self.succeeded(joined, on: loop))
        while let read = try await reader.next(), read < 31 {}
        #expect(try await Self.succeeded(second, on: loop))
        #expect(try await Self.succeeded(joined, on: loop))

        let waiting = pause.begin()
        pause.didTerminate()  // the route let go of the body
        await #expect(throws: CancellationError.self) { try await waiting.get() }
        await #expect(throws: CancellationError.self) { try await pause.begin().get() }
        pause.produceMore()  // an ask after the end: nothing changes
        try await loop.submit {}.get()
    }

    /// Through a real connection: a client that sends 1 KiB every 10 ms and a route that reads its body in bursts
    /// (nothing for a while, so that 20 wait and the connection pauses; then 12 at once, then a rest), so that the
    /// connection pauses and goes on again and again: every byte arrives, in buffers of about a kibibyte.
    @Test(.enabled(if: onPath("python3") != nil, "needs python3 (a client that sends a kibibyte every 10 ms)"))
    func aBodyReadInBurstsAtTheClientsPaceArrivesWhole() async throws {
        let chunks = 160
        let route: (Application) throws -> Void = { app in
            app.on(.POST, "paced", body: .stream) { req async throws -> String in
                var reader = req.streamedBody.makeAsyncIterator()
                try await Task.sleep(for: .milliseconds(400))  // 20 wait unread: the connection pauses
                var bytes = 0
                var buffers = 0
                while let buffer = try await reader.next() {
                    bytes += buffer.readableBytes
                    buffers += 1
                    if buffers % 12 == 0 { try await Task.sleep(for: .milliseconds(150)) }
                }
                return "\(bytes) \(buffers)"
            }
        }
        try await RunningApp.with(routes: route) { app in
            let script = """
                import http.client, socket, sys, time
                chunks = int(sys.argv[2])
                def paced():
                    for _ in range(chunks):
                        yield b"x" * 1024
                        time.sleep(0.01)
                connection = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=30)
                connection.connect()
                connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                connection.request("POST", "/paced", body=paced(), headers={"Content-Length": str(chunks * 1024)})
                answer = connection.getresponse()
                print(answer.status, answer.read().decode())
                """
            let result = try await run(
                try #require(onPath("python3")), ["-c", script, String(app.port), String(chunks)], seconds: 60)
            let figures = result.text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
            #expect(figures == [200, chunks * 1024, figures.last ?? 0], "\(result.text) \(result.errors)")
            // The buffers came a kibibyte or so each: the bursts met the pace they were made for.
            #expect((figures.last ?? 0) >= chunks / 2, "\(result.text)")
        }
    }
}
