#if Hummingbird
public import Hummingbird
public import StreamingMultipart
public import StreamingMultipartNIO

extension Request {
    /// Streams this request's form, `multipart/form-data` or `application/x-www-form-urlencoded` alike, through
    /// `spooler` and decodes it as `T` (``StreamingMultipart/SpooledForm`` for the form itself); `work` gets the
    /// value, and the form's files are removed when it returns or throws (move a `SpooledFile` out to keep it).
    ///
    /// ```swift
    /// struct Upload: Decodable {
    ///     var caption: String
    ///     var photos: [SpooledFile]
    /// }
    ///
    /// router.post("/upload") { request, _ in
    ///     try await request.multipartForm(as: Upload.self, spooler: spooler) { upload in
    ///         "\(upload.photos.count) photos"
    ///     }
    /// }
    /// ```
    ///
    /// A bad form throws ``StreamingMultipart/MultipartFormError``, which Hummingbird answers itself with the
    /// status it names (413 past a limit, 415 for another media type, 422 with the field's name for a form that is
    /// not a `T`) and a message fit for the client.
    ///
    /// - Parameters:
    ///   - spooler: where files go, and the limits.
    ///   - decoder: how names nest, dates, and the limits on the shapes names build.
    ///   - fileFilter: decides for each file, before any byte of it is stored, to store it, skip it or refuse the
    ///     form (`MultipartFileDecision`); nil leaves the spooler's own.
    ///   - ticket: a slot from an `UploadAdmission` (`admission.ticket(for:)`), which counts the body's bytes and
    ///     may cut it to make room (503).
    /// - Returns: what `work` returns.
    public func multipartForm<T: Decodable & Sendable, Result>(
        as type: T.Type, spooler: MultipartSpooler, decoder: MultipartFormDecoder = MultipartFormDecoder(),
        fileFilter: (@Sendable (MultipartStoreFile) -> MultipartFileDecision)? = nil,
        countedBy ticket: UploadAdmission.Ticket? = nil, isolation: isolated (any Actor)? = #isolation,
        _ work: (T) async throws -> Result
    ) async throws -> Result {
        var spooler = spooler
        if let fileFilter { spooler.fileFilter = fileFilter }
        return try await spooler.withDecodedForm(
            as: T.self, body, contentType: headers[.contentType], contentEncoding: headers[.contentEncoding],
            decoder: decoder, countedBy: ticket, work)
    }
}
#endif
