import StreamingMultipart
import StreamingMultipartNIO
import Vapor

extension Request {
    /// Streams this request's `multipart/form-data` body into `spooler` and decodes the form as `T`; `work` gets
    /// the value, and every file the form spooled is removed when it returns or throws (move a `SpooledFile` out
    /// with `move(to:)` to keep it). The route must take its body as a stream (`body: .stream`), or Vapor
    /// collects it in memory first. Given a `ticket` from an `UploadAdmission`, the body is counted by it (the
    /// admission's rates) and its reading ends at the next buffer once the ticket is cut.
    ///
    /// ```swift
    /// app.on(.POST, "upload", body: .stream) { req in
    ///     try await req.withMultipartForm(as: Upload.self, spooler: spooler) { upload in
    ///         for photo in upload.photos { try photo.move(to: "/srv/photos/\(UUID()).jpg") }
    ///         return HTTPStatus.created
    ///     }
    /// }
    /// ```
    ///
    /// - Throws: `MultipartError` for a malformed body or one past the spooler's limits (`httpStatus` says which
    ///   status to answer), `DecodingError` for a form that is not a `T`, and what `work` throws.
    public func withMultipartForm<T: Decodable, Result>(
        as type: T.Type, spooler: MultipartSpooler, decoder: MultipartFormDecoder = MultipartFormDecoder(),
        countedBy ticket: UploadAdmission.Ticket? = nil, _ work: (T) async throws -> Result
    ) async throws -> Result {
        guard let contentType = headers.first(name: .contentType) else {
            throw StreamingMultipart.MultipartError(
                code: .invalidContentType, message: "the request has no Content-Type")
        }
        func decoded<Body: AsyncSequence>(from body: sending Body) async throws -> Result
        where Body.Element == ByteBuffer {
            try await spooler.withSpooledForm(
                body, contentType: contentType, contentEncoding: headers.first(name: .contentEncoding)
            ) { form in
                try await work(try decoder.decode(T.self, from: form))
            }
        }
        guard let ticket else { return try await decoded(from: body) }
        return try await decoded(from: body.counted(by: ticket))
    }
}
