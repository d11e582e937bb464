#if Hummingbird
public import Hummingbird
public import StreamingMultipart
import StreamingMultipartNIO
public import StreamingMultipartServer

extension Request {
    /// Streams this request's form, `multipart/form-data` or `application/x-www-form-urlencoded` alike, through
    /// `spooler` and decodes it as `T` (`SpooledForm` for the form itself); `work` gets the
    /// value, and the form's files are removed when it returns or throws (move a `SpooledFile` out to keep it).
    ///
    /// ```swift
    /// struct Upload: Decodable {
    ///     var caption: String
    ///     var photos: [SpooledFile]
    /// }
    ///
    /// router.post("/upload") { request, context in
    ///     try await request.multipartForm(as: Upload.self, context: context, spooler: spooler) { upload in
    ///         "\(upload.photos.count) photos"
    ///     }
    /// }
    /// ```
    ///
    /// It is `MultipartSpooler.withDecodedForm` on this request's body and headers, with `fileFilter` (when given)
    /// in place of the spooler's, the body counted by an admission's `ticket` (when given), and `context`'s logger
    /// in place of the spooler's (what the spooler logs carries the request's id, as Hummingbird's
    /// `request.decode(as:context:)` takes the context for). A bad form throws
    /// ``StreamingMultipart/MultipartFormError``, which Hummingbird answers itself with its status (413 past a limit,
    /// 415 for another media type, 422 naming the field of a form that is not a `T`), its JSON and `Connection:
    /// close`.
    public func multipartForm<T: Decodable & Sendable, Result>(
        as type: T.Type, context: some RequestContext, spooler: MultipartSpooler,
        decoder: MultipartFormDecoder = MultipartFormDecoder(),
        fileFilter: (@Sendable (MultipartStoreFile) -> MultipartFileDecision)? = nil,
        countedBy ticket: UploadAdmission.Ticket? = nil, isolation: isolated (any Actor)? = #isolation,
        _ work: (T) async throws -> Result
    ) async throws -> Result {
        var spooler = spooler
        spooler.logger = context.logger
        return try await spooler.withDecodedForm(
            as: T.self, body, contentType: headers[.contentType], contentEncoding: headers[.contentEncoding],
            decoder: decoder, fileFilter: fileFilter, countedBy: ticket, work)
    }
}
#endif
