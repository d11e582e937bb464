import Foundation
import Metrics

extension MultipartSpooler {
    /// Whether `contentType` says `application/x-www-form-urlencoded`: what a browser sends for a form without
    /// files, which the spooler reads into the same ``SpooledForm`` (fields only).
    static func isURLEncoded(_ contentType: String) -> Bool {
        (try? ContentType(parsing: contentType))?.mediaType == "application/x-www-form-urlencoded"
    }

    /// The most bytes an urlencoded body may hold: its fields end in memory, and percent-encoding and separators
    /// make a body at most about three times what its fields hold, so four times ``Limits/maxMemoryBytes`` (and
    /// never more than the parser's ``MultipartParser/Limits/maxBodyBytes``). A flood of `&` holds nothing and
    /// still stops there.
    public var maxURLEncodedBodyBytes: Int64 {
        let (four, overflow) = limits.maxMemoryBytes.multipliedReportingOverflow(by: 4)
        return min(limits.parser.maxBodyBytes, overflow ? .max : four)
    }

    /// Reads an urlencoded form's fields into the form's one field collector: the budget, the per-field cost and
    /// `_charset_` apply as to a multipart form's fields.
    fileprivate func collectURLEncoded<Body: AsyncSequence>(
        _ body: Body, contentEncoding: String?, watchdog: BodyWatchdog?, isolation actor: isolated (any Actor)?
    ) async throws -> SpooledForm where Body.Element: MultipartChunk {
        guard try ContentEncoding(headerValue: contentEncoding) == .identity else {
            throw MultipartError(
                code: .unsupportedContentEncoding,
                message: "an urlencoded form is read as it is sent, not with Content-Encoding \(contentEncoding ?? "")")
        }
        var reader = URLEncodedFormReader(limits: limits.parser, maxBodyBytes: maxURLEncodedBodyBytes)
        var collector = FormCollector(spooler: self, watchdog: watchdog)
        let keep = { (field: URLEncodedFormReader.Field, collector: inout FormCollector) throws in
            let name = String(decoding: field.name, as: UTF8.self)
            let head = MultipartParser.PartHead(
                index: field.index, headers: [:], disposition: ContentDisposition(name: name))
            try collector.keepField(head, bytes: field.value)
        }
        watchdog?.begin()
        var chunks = body.makeAsyncIterator()
        while let chunk = try await chunks.nextChunk(isolation: actor) {
            let bytes = chunk.multipartBytes.arraySlice  // a form of short values: copied when lent
            try watchdog?.received(bytes.count)
            metrics.received.increment(by: bytes.count)
            try reader.append(bytes) { try keep($0, &collector) }
        }
        try Task.checkCancellation()  // a source that ended because its task was cancelled
        try reader.finish { try keep($0, &collector) }
        return try collector.finish()
    }
}

/// An urlencoded body sent to ``MultipartSpooler/spool(_:contentType:contentEncoding:isolation:)``, moved to the
/// task that reads it (the spool's own task under a body timeout, or the caller's); nothing else touches it.
struct CollectingURLEncoded<Body: AsyncSequence>: FormCollecting, @unchecked Sendable
where Body.Element: MultipartChunk {
    let spooler: MultipartSpooler
    let body: Body
    let contentEncoding: String?
    let watchdog: BodyWatchdog?

    func collect(isolation: isolated (any Actor)?) async throws -> SpooledForm {
        try await spooler.collectURLEncoded(
            body, contentEncoding: contentEncoding, watchdog: watchdog, isolation: isolation)
    }
}
