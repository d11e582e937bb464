#if Hummingbird
import HTTPTypes
import HummingbirdCore
import NIOCore
import NIOHTTPTypes
import ServiceLifecycle
import StreamingMultipart
import StreamingMultipartServer
import StreamingMultipartUploadClient

/// Serves `ResumableUploads` (StreamingMultipartServer) around a Hummingbird responder: the upload resources
/// (`HEAD`, `PATCH`, `DELETE` under `ResumableUploads.resourcePrefix`) and the routes of the
/// requests the pipeline announced, which read one body that pauses while the client reconnects.
///
/// A route's answer belongs to the request that was feeding the upload when the route answered, or that completed
/// it: the creation request's own connection, or an append's. The route therefore writes to a relay (NIO's
/// `makeTestingWriter()`, an unbounded stream), and the answer goes on when the route is done: keep an upload route's
/// answer small (a form's summary is).
extension ResumableUploads {
    /// `responder` with this server's resumable uploads served.
    func responder(wrapping responder: @escaping HTTPChannelHandler.Responder) -> HTTPChannelHandler.Responder {
        { request, writer, channel in
            if Self.isResource(request.uri.path) {
                try await self.serveResource(request, writer: writer, channel: channel)
            } else if self.asksLimits(
                method: request.method.rawValue, path: request.uri.path,
                version: request.headers[.uploadDraftInteropVersion])
            {
                // What a creation here would be told, before it is made (the draft's `OPTIONS`).
                let version = request.headers[.uploadDraftInteropVersion] ?? ResumableUpload.interopVersion
                try await writer.writeResponse(
                    Self.answer(.noContent, [("Upload-Draft-Interop-Version", version), self.limitField()]))
            } else if let token = request.headers[Self.tokenFieldName], let upload = self.claim(token) {
                try await self.serveCreation(
                    request, of: upload, writer: writer, channel: channel, responder: responder)
            } else {
                try await responder(request, writer, channel)
            }
        }
    }

    private static let tokenFieldName = HTTPField.Name(tokenField)!

    // MARK: The creation request

    /// Runs the route on the upload's body while this request feeds it, then sends the route's answer where it
    /// belongs. A creation that completes the upload (`Upload-Complete: ?1`) waits for the route's answer; one that
    /// does not (`?0`: a client that sends its body in pieces, or learns the location only from a final answer)
    /// is answered `201 Created` with the location once its bytes are in, and the route reads on from the appends.
    private func serveCreation(
        _ request: Request, of upload: Upload, writer: consuming ResponseWriter, channel: any Channel,
        responder: @escaping HTTPChannelHandler.Responder
    ) async throws {
        var head = request.head
        head.headerFields[Self.tokenFieldName] = nil
        let header = { (name: String) in HTTPField.Name(name).flatMap { request.headers[$0] } }
        let completes = ResumableUpload.completes(version: upload.version, field: header) ?? true
        let routed = Request(head: head, body: RequestBody(asyncSequence: upload.body))
        let segment = try upload.body.attach(from: 0)
        // The request hands its body to the upload, whose reader (the route) pulls it, and waits until it is read
        // or cut off. Awaited below, after the answer: a route may answer before the client has sent everything.
        let feeding = Task {
            try? await upload.body.feed(segment, request.body, completes: completes) { channel.close(promise: nil) }
        }
        // The route runs in a task of its own: it outlives this request when the request does not complete the
        // upload. Its answer goes to the request that fed the upload last (``answered(with:for:)``).
        let routing = Task { await self.route(routed, of: upload, channel: channel, responder: responder) }
        if !completes {
            await feeding.value
            if !upload.body.isOver {
                // The bytes are in and the upload waits for appends: where to send them, and how far it got.
                var fields = [("Location", Self.resourcePrefix + upload.token), limitField(for: upload)]
                fields += upload.stateFields()
                if let length = upload.length { fields.append(("Upload-Length", String(length))) }
                return try await writer.writeResponse(Self.answer(.created, fields))
            }
        }
        // Awaited here, the route is this request's to cancel, as it was when it ran inline (a route that goes on
        // after a `201` is the upload's: its window, its lifetime and a graceful shutdown end it).
        let (target, parts, routeError) = await withTaskCancellationHandler {
            await routing.value
        } onCancel: {
            routing.cancel()
        }
        if target == segment {
            try await Self.write(parts, to: writer)
        } else {
            channel.close(promise: nil)  // another request answers; this one was cut off or dropped
        }
        await feeding.value
        if let routeError { throw routeError }
    }

    /// Runs the route on `upload`'s body, and hands its answer to the request it belongs to: which request that is,
    /// the answer, and the route's error if it threw (what it answered is handed on all the same).
    private func route(
        _ routed: Request, of upload: Upload, channel: any Channel, responder: HTTPChannelHandler.Responder
    ) async -> (target: Int?, parts: [HTTPResponsePart], error: (any Error)?) {
        defer { remove(upload) }
        let (relay, answer) = NIOAsyncChannelOutboundWriter<HTTPResponsePart>.makeTestingWriter()
        let routeError: (any Error)?
        do {
            // A graceful shutdown ends a paused upload at once, not after its window.
            try await withGracefulShutdownHandler {
                // An admission ticket the route takes ends this upload's body when cut, paused or not.
                try await reading(upload) { try await responder(routed, ResponseWriter(outbound: relay), channel) }
            } onGracefulShutdown: {
                upload.body.shutDown()
            }
            routeError = nil
        } catch {
            routeError = error
        }
        relay.finish()
        let target = upload.body.answeringSegment
        upload.body.readerWentAway()
        var parts: [HTTPResponsePart] = []
        for await part in answer { parts.append(part) }
        parts = upload.marked(parts)
        // Gone before the answer reaches anyone: a HEAD sent the moment the last append is answered finds nothing
        // (under load it found the upload still there, the creation request not yet ended).
        remove(upload)
        upload.answered(with: parts, for: target)
        return (target, parts, routeError)
    }

    // MARK: The upload resources

    /// `HEAD` (the offset), `PATCH` (an append) and `DELETE` (the end) on an upload's location.
    private func serveResource(_ request: Request, writer: consuming ResponseWriter, channel: any Channel) async throws
    {
        let version = request.headers[.uploadDraftInteropVersion] ?? ResumableUpload.interopVersion
        guard ResumableUpload.serverVersions.contains(version) else {
            return try await writer.writeResponse(
                Self.answer(.badRequest, [("Upload-Draft-Interop-Version", ResumableUpload.interopVersion)]))
        }
        guard let upload = upload(at: request.uri.path) else {
            return try await writer.writeResponse(Self.answer(.notFound, [("Upload-Draft-Interop-Version", version)]))
        }
        // An upload speaks the version it was created in: another's rules (version 6's append type) never apply.
        guard version == upload.version else {
            return try await Self.refuse(
                "the upload speaks interop version \(upload.version), not \(version)", upload, writer: writer)
        }
        // The offset and the upload's end are the server's to say in a HEAD's or a DELETE's answer, never the
        // client's to send (the draft: such a request is refused).
        if request.method == .head || request.method == .delete,
            ["Upload-Offset", "Upload-Complete", "Upload-Incomplete"].contains(where: { name in
                HTTPField.Name(name).map { request.headers[$0] != nil } ?? false
            })
        {
            return try await Self.refuse(
                "a \(request.method.rawValue) of an upload carries no Upload-Offset or Upload-Complete", upload,
                writer: writer)
        }
        switch request.method {
        case .head:
            await upload.body.takeOver(after: Self.offsetGrace)
            var fields = upload.stateFields()
            if let length = upload.length { fields.append(("Upload-Length", String(length))) }
            fields.append(limitField(for: upload))
            fields.append(("Cache-Control", "no-store"))
            try await writer.writeResponse(Self.answer(.noContent, fields))
        case .delete:
            // Gone before the answer: a HEAD right after finds nothing. The request still feeding it is closed
            // without an answer; the client asked for none.
            upload.body.cancelByClient()
            remove(upload)
            try await writer.writeResponse(Self.answer(.noContent, [("Upload-Draft-Interop-Version", version)]))
        case .patch:
            try await append(request, to: upload, version: version, writer: writer, channel: channel)
        default:
            try await writer.writeResponse(
                Self.answer(
                    .methodNotAllowed, [("Allow", "HEAD, PATCH, DELETE"), ("Upload-Draft-Interop-Version", version)]))
        }
    }

    /// An append: its bytes go into the upload's body from the offset it names; the answer is the route's when it
    /// completes the upload, else the new offset.
    private func append(
        _ request: Request, to upload: Upload, version: String, writer: consuming ResponseWriter, channel: any Channel
    ) async throws {
        let header = { (name: String) in HTTPField.Name(name).flatMap { request.headers[$0] } }
        guard let offset = ResumableUpload.offset(request.headers[.uploadOffset]) else {
            return try await Self.refuse("an append needs Upload-Offset", upload, writer: writer)
        }
        if ResumableUpload.appendNeedsPartialUploadType(version: upload.version),
            request.headers[.contentType] != "application/partial-upload"
        {
            return try await Self.refuse(
                "an append of interop version \(upload.version) is Content-Type: application/partial-upload", upload,
                writer: writer)
        }
        let completes = ResumableUpload.completes(version: version, field: header) ?? true
        let length = request.headers[.contentLength].flatMap { Int64($0) }
        // The whole length this append says (`Upload-Length`, and a completing append's end) must agree with itself
        // and with the one the upload knows; it is recorded once the append is taken.
        var says: Int64? = nil
        if let field = request.headers[.uploadLength] {
            guard let declared = ResumableUpload.length(field) else {
                return try await Self.refuse("Upload-Length \(field) is not a length", upload, writer: writer)
            }
            says = declared
        }
        if completes, let length {
            if let says, says != offset + length {
                return try await Self.refuse(
                    "the append ends at \(offset + length), not at its Upload-Length \(says)", upload, writer: writer)
            }
            says = offset + length
        }
        if let says, let known = upload.length, says != known {
            return try await Self.refuse(
                "the append says the upload is \(says) bytes, not \(known)", upload, writer: writer)
        }
        if let total = says ?? upload.length, let length, offset + length > total {
            return try await Self.refuse(
                "the append does not end where the upload does (\(total) bytes)", upload, writer: writer)
        }
        let segment: Int
        do {
            segment = try upload.body.attach(from: offset)
        } catch ResumableBody.Refusal.conflict(let expected) {
            var fields = upload.stateFields().filter { $0.0 != "Upload-Offset" }
            fields.append(("Upload-Offset", String(expected)))
            // Closed after the answer: the rest of a stale append's body is not read. A browser re-sends an append
            // whose reused connection was cut (from the old offset, as it was), and reading that whole body to
            // keep the connection cost the upload the body again.
            fields.append(("Connection", "close"))
            return try await writer.writeResponse(Self.answer(.conflict, fields))
        } catch {
            return try await writer.writeResponse(Self.answer(.notFound, [("Upload-Draft-Interop-Version", version)]))
        }
        if let says { _ = upload.record(length: says) }  // agreed above; a racing append's is refused there
        do {
            try await upload.body.feed(segment, request.body, completes: completes) { channel.close(promise: nil) }
        } catch ResumableBody.Refusal.superseded {
            return try await writer.writeResponse(
                Self.answer(.conflict, upload.stateFields() + [("Connection", "close")]))
        } catch ResumableBody.Refusal.ended {
            // The route answered before this request's bytes were all read (a limit, say): its answer is this one's.
        }
        guard completes || upload.body.isOver else {
            return try await writer.writeResponse(Self.answer(.noContent, upload.stateFields()))
        }
        guard let parts = await upload.answer(for: segment) as? [HTTPResponsePart] else {
            return try await writer.writeResponse(Self.answer(.notFound, [("Upload-Draft-Interop-Version", version)]))
        }
        try await Self.write(parts, to: writer)
    }

    // MARK: Answers

    /// A head with `fields`, no body (`Content-Length: 0` where a body could be).
    private static func answer(_ status: HTTPResponse.Status, _ fields: [(String, String)]) -> HTTPResponse {
        var head = HTTPResponse(status: status)
        for (name, value) in fields {
            if let name = HTTPField.Name(name) { head.headerFields.append(HTTPField(name: name, value: value)) }
        }
        if status != .noContent { head.headerFields[.contentLength] = "0" }
        return head
    }

    /// `400 Bad Request` for an append, with the upload's state and `message` as its text.
    private static func refuse(_ message: String, _ upload: Upload, writer: consuming ResponseWriter) async throws {
        var head = answer(.badRequest, upload.stateFields())
        let text = ByteBuffer(string: message + "\n")
        head.headerFields[.contentLength] = String(text.readableBytes)
        head.headerFields[.contentType] = "text/plain; charset=utf-8"
        try await writer.write(response: head, body: ResponseBody(byteBuffer: text))
    }

    /// Writes a relayed answer: its interim heads, its final head, its body and its end.
    private static func write(_ parts: [HTTPResponsePart], to writer: consuming ResponseWriter) async throws {
        var rest = parts[...]
        while case .head(let head) = rest.first, head.status.kind == .informational {
            try await writer.writeInformationalHead(head)
            rest = rest.dropFirst()
        }
        guard case .head(let head) = rest.first else {
            return try await writer.writeResponse(HTTPResponse(status: .internalServerError))
        }
        var body = try await writer.writeHead(head)
        for part in rest.dropFirst() {
            switch part {
            case .head: continue
            case .body(let buffer): try await body.write(buffer)
            case .end(let trailers): return try await body.finish(trailers)
            }
        }
        try await body.finish(nil)
    }
}

extension ResumableUploads.Upload {
    /// `parts` with the upload's state on its final head (the interop version, the offset, and that it is
    /// complete: the route's answer ends the upload, whether or not it read the body's last bytes).
    fileprivate func marked(_ parts: [HTTPResponsePart]) -> [HTTPResponsePart] {
        parts.map { part in
            guard case .head(var head) = part, head.status.kind != .informational else { return part }
            for (name, value) in stateFields(complete: true) {
                if let name = HTTPField.Name(name) { head.headerFields[name] = value }
            }
            return .head(head)
        }
    }
}

extension HTTPField.Name {
    fileprivate static let uploadDraftInteropVersion = Self("Upload-Draft-Interop-Version")!
    fileprivate static let uploadOffset = Self("Upload-Offset")!
    fileprivate static let uploadLength = Self("Upload-Length")!
}
#endif
