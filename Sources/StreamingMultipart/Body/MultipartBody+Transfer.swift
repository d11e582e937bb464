extension MultipartBody {
    /// How far a transfer has got: bytes produced against the total, and the part being read.
    ///
    /// ```swift
    /// let stream = body.makeInputStream(progress: { progress in
    ///     print("\(progress.completedBytes) of \(progress.totalBytes ?? -1), part \(progress.partIndex ?? -1)")
    /// })
    /// ```
    public struct Progress: Sendable, Hashable {
        /// Bytes of the body produced so far (before compression, when the body is compressed).
        public var completedBytes: Int64
        /// The body's length (before compression), or nil when some part's length is unknown.
        public var totalBytes: Int64?
        /// The part being read, or nil before the first part's delimiter and after the last part.
        public var partIndex: Int?

        public init(completedBytes: Int64, totalBytes: Int64?, partIndex: Int?) {
            self.completedBytes = completedBytes
            self.totalBytes = totalBytes
            self.partIndex = partIndex
        }

        /// `completedBytes / totalBytes`, or nil when the total is unknown (1 for an empty total).
        public var fractionCompleted: Double? {
            guard let totalBytes else { return nil }
            return totalBytes == 0 ? 1 : Double(completedBytes) / Double(totalBytes)
        }
    }

    /// Bandwidth throttling, as AFNetworking's `throttleBandwidthWithPacketSize:delay:`: at most `packetSize`
    /// bytes per read, then a pause of `delay`.
    ///
    /// The input stream pauses the thread that reads it (URLSession's stream thread), as AFNetworking does; the
    /// async chunks sleep with `Task.sleep` and block no thread.
    ///
    /// ```swift
    /// request.httpBodyStream = body.makeInputStream(throttle: .cellular)   // 16 KiB every 0.2 s
    /// ```
    public struct Throttle: Sendable, Hashable {
        /// The most bytes produced before each pause; at least 1.
        public var packetSize: Int
        /// The pause after each packet.
        public var delay: Duration

        public init(packetSize: Int, delay: Duration) {
            self.packetSize = max(1, packetSize)
            self.delay = delay
        }

        /// AFNetworking's suggestion for 3G: 16 KiB packets every 0.2 s.
        public static let cellular = Throttle(packetSize: 16 * 1024, delay: .milliseconds(200))
    }
}

extension BodyReader {
    /// Where this reader has got.
    public var progress: MultipartBody.Progress {
        MultipartBody.Progress(completedBytes: plainBytesRead, totalBytes: plainLength, partIndex: currentPartIndex)
    }
}

extension MultipartBody {
    /// A reader that produces this body from the start, opening files and making streams as it reaches them.
    ///
    /// - Parameter compression: compresses the body as it is read (`Content-Encoding: gzip` or `deflate`); its
    ///   ``BodyReader/contentLength`` is then nil.
    public func makeReader(compression: Compression? = nil) -> BodyReader {
        BodyReader(body: self, compression: compression)
    }
}
