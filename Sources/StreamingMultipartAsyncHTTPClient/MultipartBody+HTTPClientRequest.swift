public import AsyncHTTPClient
import NIOCore
public import StreamingMultipart
import StreamingMultipartNIO

extension MultipartBody {
    /// The body as an `HTTPClientRequest.Body`: `Content-Length` when every part's length is known, chunked
    /// otherwise.
    ///
    /// ```swift
    /// import AsyncHTTPClient
    /// import StreamingMultipart
    /// import StreamingMultipartAsyncHTTPClient
    ///
    /// var request = HTTPClientRequest(url: "https://example.com/upload")
    /// request.method = .POST
    /// request.headers.add(name: "Content-Type", value: body.contentType)
    /// request.body = body.httpClientRequestBody()
    /// ```
    ///
    /// The bytes are pulled as AsyncHTTPClient asks for them (with its backpressure), read straight into
    /// `ByteBuffer`s (`byteBuffers(size:compression:throttle:progress:allocator:)` of StreamingMultipartNIO).
    /// AsyncHTTPClient follows no redirect with such a body and retries nothing;
    /// `HTTPClient/upload(_:to:method:headers:options:progress:)` does both, re-creating the body.
    ///
    /// - Parameters:
    ///   - size: the most bytes in one buffer; at least 1.
    ///   - compression: compresses the body as it is read (add `Content-Encoding`); the length is then unknown.
    ///   - throttle: at most `throttle.packetSize` bytes per buffer, then a pause.
    ///   - progress: called after each buffer.
    public func httpClientRequestBody(
        size: Int = 256 * 1024, compression: Compression? = nil, throttle: Throttle? = nil,
        progress: (@Sendable (Progress) -> Void)? = nil
    ) -> HTTPClientRequest.Body {
        httpClientRequestBody(size: size, compression: compression, throttle: throttle, progress: progress, heldBy: nil)
    }

    /// The body, its first buffer held by `gate` for at most `timeout` when there is one.
    func httpClientRequestBody(
        size: Int, compression: Compression?, throttle: Throttle?, progress: (@Sendable (Progress) -> Void)?,
        heldBy gate: (gate: ContinueGate, timeout: Duration)?
    ) -> HTTPClientRequest.Body {
        let buffers = byteBuffers(size: size, compression: compression, throttle: throttle, progress: progress)
        let length: HTTPClientRequest.Body.Length = buffers.contentLength.map { .known($0) } ?? .unknown
        guard let gate else { return .stream(buffers, length: length) }
        return .stream(HeldBuffers(base: buffers, gate: gate.gate, timeout: gate.timeout), length: length)
    }
}
