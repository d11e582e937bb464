extension MultipartSpooler {
    /// Reads a request's form, `multipart/form-data` or `application/x-www-form-urlencoded` alike, decodes it as
    /// `T` (``SpooledForm`` for the form itself), hands the value to `work`, and removes the form's files when
    /// `work` returns or throws. A file `work` moves out with ``SpooledFile/move(to:)-(String)`` stays.
    ///
    /// ```swift
    /// struct Upload: Decodable {
    ///     var caption: String
    ///     var photos: [SpooledFile]
    /// }
    ///
    /// let saved = try await spooler.withDecodedForm(as: Upload.self, body, contentType: contentType) { upload in
    ///     for photo in upload.photos { try photo.move(to: "/srv/photos/\(UUID()).jpg") }
    ///     return upload.photos.count
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - type: what to decode the form as; ``SpooledForm`` for the form itself.
    ///   - body: the request's body, as the server hands it over.
    ///   - contentType: the request's `Content-Type`; nil fails with ``MultipartError/Code/invalidContentType``.
    ///   - contentEncoding: the request's `Content-Encoding`, nil for none.
    ///   - decoder: names, dates and the limits on the shapes names build.
    ///   - isolation: the actor the form is read on; the caller's by default.
    ///   - work: what to do with the value, while the form's files are there.
    /// - Returns: what `work` returns.
    /// - Throws: ``MultipartFormError`` for everything that fails before `work` runs: a malformed body or one past
    ///   the limits, a field missing or of the wrong kind, a file the ``fileFilter`` refused, the body's own
    ///   failure; and what `work` throws, as it is.
    public func withDecodedForm<T: Decodable & Sendable, Body: AsyncSequence, Result>(
        as type: T.Type, _ body: sending Body, contentType: String?, contentEncoding: String? = nil,
        decoder: MultipartFormDecoder = MultipartFormDecoder(), isolation: isolated (any Actor)? = #isolation,
        _ work: (T) async throws -> Result
    ) async throws -> Result where Body.Element: MultipartChunk {
        let form: SpooledForm
        do {
            guard let contentType else {
                throw MultipartError(code: .invalidContentType, message: "the request has no Content-Type")
            }
            form = try await spool(
                BodyFailureNaming(base: body), contentType: contentType, contentEncoding: contentEncoding)
        } catch {
            throw MultipartFormError(error, keyStrategy: decoder.keyStrategy)
        }
        defer { form.removeFiles() }
        let value: T
        do {
            value = try decoder.decode(T.self, from: form)
        } catch {
            throw MultipartFormError(error, keyStrategy: decoder.keyStrategy)
        }
        return try await work(value)
    }
}

/// A request's body whose own failures (the client went away, the framework's stream ended early) are
/// ``MultipartError/Code/streamFailed``: the client's doing, answered 400, where an error of unknown kind would be
/// the server's (500). A `CancellationError` (a cut upload, a task ended) and a ``MultipartError`` pass as they are.
private struct BodyFailureNaming<Base: AsyncSequence>: AsyncSequence where Base.Element: MultipartChunk {
    typealias Element = Base.Element
    let base: Base

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator

        mutating func next() async throws -> Element? {
            do {
                return try await base.next()
            } catch let error where error is CancellationError || error is MultipartError {
                throw error
            } catch {
                throw MultipartError(code: .streamFailed, message: "reading the request's body failed", cause: error)
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator()) }
}

extension SpooledForm: Decodable {
    /// Not a decoding of its own: a `SpooledForm` is `Decodable` so that a route can ask
    /// ``MultipartSpooler/withDecodedForm(as:_:contentType:contentEncoding:decoder:isolation:_:)`` for the whole
    /// form, which ``MultipartFormDecoder`` hands over as it is. Any other decoding of one throws.
    public init(from decoder: any Decoder) throws {
        throw DecodingError.typeMismatch(
            SpooledForm.self,
            .init(
                codingPath: decoder.codingPath,
                debugDescription: "a SpooledForm is only the whole form MultipartFormDecoder reads, never a value in it"
            ))
    }
}
