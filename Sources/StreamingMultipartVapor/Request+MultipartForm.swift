#if Vapor
public import StreamingMultipart
import StreamingMultipartNIO
public import StreamingMultipartServer
public import Vapor

extension Request {
    /// This request's form (multipart or urlencoded) spooled and decoded as `T`, handed to `work`; its files are
    /// removed when `work` returns or throws. The route must take its body as a stream (`body: .stream`), or Vapor
    /// collects it in memory first.
    ///
    /// ```swift
    /// struct Upload: Decodable {
    ///     var caption: String
    ///     var photos: [SpooledFile]
    /// }
    ///
    /// app.on(.POST, "upload", body: .stream) { req in
    ///     try await req.multipartForm(as: Upload.self, spooler: spooler) { upload in
    ///         "\(upload.photos.count) photos"
    ///     }
    /// }
    /// ```
    ///
    /// Vapor's own `ErrorMiddleware` answers the ``StreamingMultipart/MultipartFormError`` a bad form throws as an
    /// `AbortError` with its status and message; ``MultipartErrorMiddleware`` (`app.useMultipartUploads()`) answers
    /// it as the library's JSON, code and field included. The rest is `MultipartSpooler.withDecodedForm` on this
    /// request, with `fileFilter` (when given) in place of the spooler's, the body counted by an admission's
    /// `ticket` (when given), and the request's logger in place of the spooler's (what the spooler logs carries
    /// the request's id). The body is read as ``streamedBody``, not as `req.body` (whose sequence can stop the
    /// process: its docs say when).
    public func multipartForm<T: Decodable & Sendable, Result>(
        as type: T.Type, spooler: MultipartSpooler, decoder: MultipartFormDecoder = MultipartFormDecoder(),
        fileFilter: (@Sendable (MultipartStoreFile) -> MultipartFileDecision)? = nil,
        countedBy ticket: UploadAdmission.Ticket? = nil, isolation: isolated (any Actor)? = #isolation,
        _ work: (T) async throws -> Result
    ) async throws -> Result {
        var spooler = spooler
        spooler.logger = logger
        return try await spooler.withDecodedForm(
            as: T.self, streamedBody, contentType: headers.first(name: .contentType),
            contentEncoding: headers.first(name: .contentEncoding), decoder: decoder, fileFilter: fileFilter,
            countedBy: ticket, work)
    }
}
#endif
