#if Hummingbird
import NIOCore
import NIOHTTP2

/// What one HTTP/2 connection may ask of a server made by
/// ``HummingbirdCore/HTTPServerBuilder/guardedHTTP2(tls:guards:http2:idleTimeout:resumableUploads:)``: the bounds
/// that answer HTTP/2's own attacks, each with a GOAWAY (`ENHANCE_YOUR_CALM` for a flood), as nginx 1.25 and Go's
/// `net/http` answer them.
///
/// ```swift
/// var limits = HTTP2Limits()
/// limits.maxConcurrentStreams = 32
/// let server = try HTTPServerBuilder.guardedHTTP2(tls: nil, http2: limits)
/// ```
///
/// | attack | bound |
/// | --- | --- |
/// | many streams at once | ``maxConcurrentStreams`` (SETTINGS_MAX_CONCURRENT_STREAMS); more is refused |
/// | rapid reset (CVE-2023-44487), stream errors | ``maxFloodFrames`` resets or stream errors in 30 s |
/// | SETTINGS, PING, PRIORITY floods | ``maxFloodFrames`` in 30 s; answers owed at most 10,000 frames |
/// | CONTINUATION flood (CVE-2024-27316) | 5 CONTINUATION frames a header block, and ``maxHeaderListSize`` |
/// | HPACK bomb | ``maxHeaderListSize`` of decoded headers (SETTINGS_MAX_HEADER_LIST_SIZE) |
/// | empty DATA frames | 1 in a row |
/// | a body never read | ``streamWindow``: the most of a stream's body the server holds before its route reads it |
public struct HTTP2Limits: Sendable, Hashable {
    /// The streams one connection may have open at once. Default 100 (nginx 128, Go 250).
    public var maxConcurrentStreams: Int
    /// The bytes of a request's header list, decoded. Default 16 KiB.
    public var maxHeaderListSize: Int
    /// The bytes of a stream's body the server takes ahead of its route (the stream's flow-control window, opened
    /// again only as the route reads): what a slow store makes the server hold per stream, so at most this times
    /// ``maxConcurrentStreams`` a connection, and in practice this times the uploads admitted at once (a stream
    /// refused or answered early is reset). Default 1 MiB, as Go's `MaxUploadBufferPerStream`: 64 KiB (HTTP/2's
    /// own default) held a 1 GiB upload to 0.38 times its HTTP/1.1 rate here, 1 MiB to 0.82 (`Benchmarks/http2.sh`).
    public var streamWindow: Int
    /// The resets, stream errors, or SETTINGS/PING/PRIORITY frames a client may send in 30 s, each kind counted
    /// apart. Default 200.
    public var maxFloodFrames: Int

    public init(
        maxConcurrentStreams: Int = 100, maxHeaderListSize: Int = 16 * 1024, streamWindow: Int = 1 << 20,
        maxFloodFrames: Int = 200
    ) {
        self.maxConcurrentStreams = maxConcurrentStreams
        self.maxHeaderListSize = maxHeaderListSize
        self.streamWindow = streamWindow
        self.maxFloodFrames = maxFloodFrames
    }

    /// NIO's configuration with these limits, and the fixed ones of the table above.
    var configuration: NIOHTTP2Handler.Configuration {
        var configuration = NIOHTTP2Handler.Configuration()
        configuration.connection.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: maxHeaderListSize),
            HTTP2Setting(parameter: .initialWindowSize, value: streamWindow),
        ]
        configuration.connection.maximumSequentialContinuationFrames = 5
        configuration.connection.maximumSequentialEmptyDataFrames = 1
        configuration.connection.maximumBufferedControlFrames = 10_000
        configuration.connection.maximumConnectionGlitches = maxFloodFrames
        configuration.connection.controlFrameRateLimit.maximumCount = maxFloodFrames
        configuration.connection.controlFrameRateLimit.windowLength = .seconds(30)
        // The connection's window: bytes in flight for all its streams at once (each stream's bounds what is held).
        configuration.connection.targetWindowSize = min(Int(Int32.max), max(65_535, streamWindow * 4))
        configuration.stream.targetWindowSize = streamWindow
        configuration.stream.streamResetFrameRateLimit.maximumCount = maxFloodFrames
        configuration.stream.streamResetFrameRateLimit.windowLength = .seconds(30)
        configuration.stream.streamErrorRateLimit.maximumCount = maxFloodFrames
        configuration.stream.streamErrorRateLimit.windowLength = .seconds(30)
        return configuration
    }
}
#endif
