public import Foundation

/// An `InputStream` over a ``MultipartBody``, for `URLRequest.httpBodyStream`.
///
/// Each ``MultipartBody/makeInputStream(compression:throttle:progress:)`` call makes a new, independent stream, so that
/// a retry, a redirect or URLSession's `needNewBodyStream` delegate call can send the body again
/// (``MultipartBody/makeInputStream(startingAt:throttle:progress:)`` for the rest of it, from an offset):
///
/// ```swift
/// func urlSession(_ session: URLSession, task: URLSessionTask,
///                 needNewBodyStream completionHandler: @escaping (InputStream?) -> Void) {
///     completionHandler(body.makeInputStream())
/// }
/// ```
///
/// A read error (a file removed, a stream shorter than declared) ends the stream with `streamStatus == .error` and
/// the ``MultipartError`` in `streamError`; `read(_:maxLength:)` returns -1. It never produces a body that
/// disagrees with the `Content-Length`.
///
/// Not `Sendable`: like every Foundation stream (swift-corelibs-foundation marks `Stream`'s conformance
/// unavailable) it is read from one thread at a time, the one URLSession reads it on. The body it was made from is a
/// `Sendable` value, so make a new stream where another thread needs one.
public final class MultipartInputStream: InputStream {
    private var reader: BodyReader
    private let throttle: MultipartBody.Throttle?
    private let progress: (@Sendable (MultipartBody.Progress) -> Void)?
    private var status: Stream.Status = .notOpen
    private var error: (any Error)?
    private weak var streamDelegate: (any StreamDelegate)?

    init(
        reader: consuming BodyReader, throttle: MultipartBody.Throttle?,
        progress: (@Sendable (MultipartBody.Progress) -> Void)?
    ) {
        self.reader = reader
        self.throttle = throttle
        self.progress = progress
        super.init(data: Data())
    }

    deinit { reader.close() }

    public override var streamStatus: Stream.Status { status }
    public override var streamError: (any Error)? { error }

    public override var delegate: (any StreamDelegate)? {
        get { streamDelegate }
        set { streamDelegate = newValue }
    }

    public override var hasBytesAvailable: Bool { status == .open || status == .reading || status == .notOpen }

    public override func open() {
        guard status == .notOpen else { return }
        status = .open
    }

    public override func close() {
        guard status != .closed else { return }
        if status != .atEnd && status != .error { reader.close() }
        status = .closed
    }

    public override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        switch status {
        case .open, .reading: break
        case .atEnd: return 0
        case .error: return -1
        default: return -1  // not opened, or closed
        }
        guard length > 0 else { return 0 }
        status = .reading
        let wanted = min(length, throttle?.packetSize ?? length)
        let count: Int
        do {
            count = try OutputRawSpan.filling(buffer, count: wanted) { _ = try reader.read(into: &$0) }
        } catch {
            self.error = error
            status = .error
            return -1
        }
        progress?(reader.progress)
        if count == 0 || reader.isFinished {
            status = .atEnd
        } else {
            status = .open
            if let delay = throttle?.delay { Thread.sleep(forTimeInterval: delay.seconds) }
        }
        return count
    }

    public override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>
    ) -> Bool { false }

    #if canImport(Darwin)
    public override func property(forKey key: Stream.PropertyKey) -> Any? { nil }
    public override func setProperty(_ property: Any?, forKey key: Stream.PropertyKey) -> Bool { false }
    public override func schedule(in aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {}
    public override func remove(from aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {}

    // CFNetwork treats an NSInputStream subclass as a CFReadStream and calls these private methods; a subclass
    // that lacks them crashes when URLSession schedules it (AFMultipartBodyStream implements the same three).
    // The stream is synchronous, so there is nothing to schedule.
    @objc func _scheduleInCFRunLoop(_ runLoop: CFRunLoop?, forMode mode: CFString?) {}
    @objc func _unscheduleFromCFRunLoop(_ runLoop: CFRunLoop?, forMode mode: CFString?) {}
    @objc func _setCFClientFlags(
        _ flags: CFOptionFlags, callback: CFReadStreamClientCallBack?,
        context: UnsafeMutablePointer<CFStreamClientContext>?
    ) -> Bool { false }
    #endif
}

extension MultipartBody {
    /// A new stream that produces this body from the start; every call returns an independent one.
    ///
    /// On Linux, URLSession sends a stream body with `Transfer-Encoding: chunked` and also sends any
    /// `Content-Length` you set, which servers reject: use `URLRequest.setMultipartBody(_:)`, which sets
    /// `Content-Length` only where it is safe, or ``MultipartBody/write(to:permissions:compression:)`` and
    /// `uploadTask(with:fromFile:)`.
    ///
    /// - Parameters:
    ///   - compression: compresses the body as it is read (send `Content-Encoding` with it, and no length).
    ///   - throttle: limits each read to a packet and pauses the reading thread after it.
    ///   - progress: called after each read, on the thread that reads the stream.
    public func makeInputStream(
        compression: Compression? = nil, throttle: Throttle? = nil, progress: (@Sendable (Progress) -> Void)? = nil
    ) -> MultipartInputStream {
        MultipartInputStream(reader: makeReader(compression: compression), throttle: throttle, progress: progress)
    }

    /// A new stream that produces this body from byte `offset` on (``makeReader(startingAt:)``): what URLSession
    /// asks its delegate for when it resumes an upload (`urlSession(_:task:needNewBodyStreamFrom:completionHandler:)`,
    /// iOS 17 and macOS 14). Its progress counts from `offset`.
    ///
    /// ```swift
    /// func urlSession(_ session: URLSession, task: URLSessionTask, needNewBodyStreamFrom offset: Int64,
    ///                 completionHandler: @escaping @Sendable (InputStream?) -> Void) {
    ///     completionHandler(try? body.makeInputStream(startingAt: offset))
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - offset: the first byte to produce, from 0 to ``contentLength``.
    ///   - throttle: limits each read to a packet and pauses the reading thread after it.
    ///   - progress: called after each read, on the thread that reads the stream.
    /// - Throws: what ``makeReader(startingAt:)`` throws.
    public func makeInputStream(
        startingAt offset: Int64, throttle: Throttle? = nil, progress: (@Sendable (Progress) -> Void)? = nil
    ) throws(MultipartError) -> MultipartInputStream {
        MultipartInputStream(reader: try makeReader(startingAt: offset), throttle: throttle, progress: progress)
    }
}

extension Duration {
    /// The duration in seconds, as `TimeInterval`.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
