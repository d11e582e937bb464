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

    /// A reader that produces this body from byte `offset` on, without producing the bytes before it: what an
    /// upload sends when it resumes after a dropped connection.
    ///
    /// ```swift
    /// var reader = try body.makeReader(startingAt: 1_048_576)   // the server has the first MiB
    /// ```
    ///
    /// Every part's length is known up front, so the reader finds the part that holds `offset` and starts inside it:
    /// in its delimiter or headers, at a position in its file (a seek), in its bytes in memory, or in its stream,
    /// whose first bytes are then made again, read and dropped (a stream has no seek). Its
    /// ``BodyReader/contentLength`` is what is left (`contentLength - offset`) and its ``BodyReader/progress``
    /// counts from `offset`, so that a progress bar goes on where it stopped. In a body whose boundary the caller
    /// chose, a file or stream part is watched for the boundary from `offset` on, an occurrence that begins just
    /// before it included (its bytes are read again for that).
    ///
    /// - Throws: ``MultipartError/Code/cannotResume`` for an offset below 0 or past the body's end, or past the start
    ///   of a stream part without a length (nothing after it has a known offset), or inside a stream that can be
    ///   read only once (``MultipartPart/Content/stream(_:length:)``); the errors of opening a file or making a
    ///   stream, as a read would throw them.
    public func makeReader(startingAt offset: Int64) throws(MultipartError) -> BodyReader {
        try BodyReader(body: self, startingAt: offset)
    }
}
