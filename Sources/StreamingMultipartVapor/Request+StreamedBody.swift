#if Vapor
public import NIOCore
import NIOConcurrencyHelpers
public import Vapor

extension Request {
    /// This request's body as an async sequence of buffers, read from the connection as the route pulls them: at
    /// most 20 buffers wait unread, and the connection is read again once fewer than 5 do. Take it in a route with
    /// `body: .stream`, in place of `req.body`.
    ///
    /// ```swift
    /// app.on(.POST, "raw", body: .stream) { req in
    ///     var bytes = 0
    ///     for try await buffer in req.streamedBody { bytes += buffer.readableBytes }
    ///     return "\(bytes) bytes"
    /// }
    /// ```
    ///
    /// Why not `req.body`: Vapor's own sequence (4.122) stops the process with a precondition failure when the
    /// route reads at about the pace the client sends (vapor/vapor#3153): NIO's producer asks for more a second time
    /// without having said stop in between, which its delegate takes for a broken state. This sequence's delegate
    /// takes a request for more at any time. ``multipartForm(as:spooler:decoder:fileFilter:countedBy:isolation:_:)``
    /// reads the body with it.
    public var streamedBody: StreamedRequestBody { StreamedRequestBody(request: self) }
}

/// A request's body as an async sequence of buffers, with back-pressure (``Vapor/Request/streamedBody``).
///
/// Iterate it once: a second iterator takes the body from the first.
public struct StreamedRequestBody: AsyncSequence, Sendable {
    public typealias Element = ByteBuffer

    let request: Request

    /// A producer's buffers: read until 20 wait, read again below 5 (NIO's high and low watermarks, as Vapor's).
    typealias Producer = NIOThrowingAsyncSequenceProducer<
        ByteBuffer, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, ReadingPause
    >

    public struct AsyncIterator: AsyncIteratorProtocol {
        var underlying: Producer.AsyncIterator

        public mutating func next() async throws -> ByteBuffer? { try await underlying.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        let eventLoop = request.eventLoop
        let pause = ReadingPause(eventLoop: eventLoop)
        let producer = Producer.makeSequence(
            elementType: ByteBuffer.self, failureType: (any Error).self,
            backPressureStrategy: .init(lowWatermark: 5, highWatermark: 20), finishOnDeinit: true, delegate: pause)
        let source = producer.source
        request.body.drain { result in
            switch result {
            case .buffer(let buffer):
                switch source.yield(buffer) {
                case .produceMore: return eventLoop.makeSucceededVoidFuture()
                case .stopProducing: return pause.begin()
                case .dropped: return eventLoop.makeFailedFuture(CancellationError())  // the route stopped reading
                }
            case .error(let error):
                source.finish(error)
                return eventLoop.makeSucceededVoidFuture()
            case .end:
                source.finish()
                return eventLoop.makeSucceededVoidFuture()
            }
        }
        return AsyncIterator(underlying: producer.sequence.makeAsyncIterator())
    }
}

/// Whether the connection's reading waits for the route, as a state machine: `reading`, `paused` (the promise the
/// body stream waits on), `ended` (the route's iterator is gone). NIO's producer may ask for more at any time, also
/// when reading already goes on: that is no change (Vapor's delegate stopped the process there). A request for more
/// is carried out on the event loop, after the pause the yield before it began (the drain's handler runs there).
final class ReadingPause: NIOAsyncSequenceProducerDelegate, Sendable {
    enum State {
        case reading
        case paused(EventLoopPromise<Void>)
        case ended
    }

    let eventLoop: any EventLoop
    let state = NIOLockedValueBox(State.reading)

    init(eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    /// The future the body stream waits on before it reads again: one the route's next request for more succeeds.
    /// A second pause before that (a body stream that wrote again without waiting) joins the first.
    func begin() -> EventLoopFuture<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        let waiting: EventLoopFuture<Void>? = state.withLockedValue { state in
            switch state {
            case .reading:
                state = .paused(promise)
                return nil
            case .paused(let earlier):
                return earlier.futureResult
            case .ended:
                return eventLoop.makeFailedFuture(CancellationError())
            }
        }
        if let waiting { waiting.cascade(to: promise) }
        return promise.futureResult
    }

    func produceMore() {
        eventLoop.execute { [self] in
            let paused: EventLoopPromise<Void>? = state.withLockedValue { state in
                guard case .paused(let promise) = state else { return nil }  // reading, or ended: nothing changes
                state = .reading
                return promise
            }
            paused?.succeed()
        }
    }

    func didTerminate() {
        let paused: EventLoopPromise<Void>? = state.withLockedValue { state in
            defer { state = .ended }
            guard case .paused(let promise) = state else { return nil }
            return promise
        }
        paused?.fail(CancellationError())
    }
}
#endif
