public import Foundation

/// One part of a multipart body: its headers and where its bytes come from.
///
/// The factories cover the usual parts; ``init(headers:content:)`` takes any headers with any content
/// (AFNetworking's `appendPartWithHeaders:body:`).
///
/// ```swift
/// var body = MultipartBody()
/// try body.append(.text("Sunset over the bay", name: "caption"))
/// try body.append(.data(jpegData, name: "thumb", filename: "thumb.jpg"))
/// try body.append(.file(at: photoURL, name: "photo"))
/// try body.append(.stream(name: "log", filename: "log.txt", length: logSize) { InputStream(url: logURL)! })
/// ```
public struct MultipartPart: Sendable {
    /// The part's headers, in the order they are sent.
    public var headers: MultipartHeaders
    /// Where the part's bytes come from.
    public var content: Content

    /// A part with any headers and any content.
    ///
    /// Headers are checked when the part is appended to a body: names must be RFC 9110 tokens and values must not
    /// hold CR, LF or NUL.
    public init(headers: MultipartHeaders, content: Content) {
        self.headers = headers
        self.content = content
    }

    /// A text field, sent as UTF-8 with no `Content-Type` (browsers send text fields this way; RFC 7578 §4.4
    /// makes `text/plain` the default).
    public static func text(_ value: String, name: String) -> MultipartPart {
        MultipartPart(headers: disposition(name: name, filename: nil, contentType: nil), content: .text(value))
    }

    /// In-memory bytes, with a filename and a content type for file fields.
    ///
    /// - Parameters:
    ///   - data: the part's bytes.
    ///   - name: the form field's name.
    ///   - filename: the file's name, for a file field; nil for a plain field.
    ///   - contentType: sent as given; when nil and a filename is given, inferred from the filename's extension.
    public static func data(_ data: Data, name: String, filename: String? = nil, contentType: String? = nil)
        -> MultipartPart
    {
        MultipartPart(
            headers: disposition(name: name, filename: filename, contentType: contentType), content: .data(data))
    }

    /// A file, read only when the body is read.
    ///
    /// Its length is taken now, so the body's `Content-Length` is known; reading fails if the file's size changes
    /// in between.
    ///
    /// - Parameters:
    ///   - url: the file, a regular file on a local file system.
    ///   - name: the form field's name.
    ///   - filename: defaults to the URL's last path component.
    ///   - contentType: defaults to the type of the filename's extension (``MultipartPart`` keeps a table of the
    ///     common web types and reads `/etc/mime.types`), or `application/octet-stream`.
    /// - Throws: ``MultipartError/Code/fileNotFound``, ``MultipartError/Code/notARegularFile`` or
    ///   ``MultipartError/Code/fileUnreadable``.
    public static func file(at url: URL, name: String, filename: String? = nil, contentType: String? = nil) throws
        -> MultipartPart
    {
        let filename = filename ?? url.lastPathComponent
        return MultipartPart(
            headers: disposition(name: name, filename: filename, contentType: contentType),
            content: try .file(at: url))
    }

    /// An input stream made by `makeStream` each time the body is read, so a body can be sent again.
    ///
    /// ```swift
    /// try body.append(.stream(name: "log", filename: "log.txt", length: logSize) { InputStream(url: logURL)! })
    /// ```
    ///
    /// - Parameters:
    ///   - name: the form field's name.
    ///   - filename: the file's name, for a file field; nil for a plain field.
    ///   - contentType: the part's `Content-Type`; nil sends none, or, with a filename, the filename's type.
    ///   - length: the exact byte count, or nil (the default) when unknown: the body's `contentLength` is then nil
    ///     and transports send it chunked. A stream that yields fewer or more bytes than a given length fails the
    ///     read with ``MultipartError/Code/lengthMismatch``; appending a negative length fails at once.
    ///   - makeStream: called for every read of the body; each call returns a new stream from the start.
    public static func stream(
        name: String, filename: String? = nil, contentType: String? = nil, length: Int? = nil,
        _ makeStream: @escaping @Sendable () throws -> InputStream
    ) -> MultipartPart {
        MultipartPart(
            headers: disposition(name: name, filename: filename, contentType: contentType),
            content: .stream(length: length.map(Int64.init), makeStream))
    }

    /// A ready-made input stream. It can be read once, so the body becomes one-shot: a second read of the body
    /// fails with ``MultipartError/Code/streamAlreadyConsumed`` instead of sending an empty part.
    ///
    /// - Parameters:
    ///   - stream: the stream, not yet opened; the body opens and closes it.
    ///   - name: the form field's name.
    ///   - filename: the file's name, for a file field; nil for a plain field.
    ///   - contentType: the part's `Content-Type`; nil sends none, or, with a filename, the filename's type.
    ///   - length: the exact byte count, or nil (the default) when unknown.
    public static func stream(
        _ stream: sending InputStream, name: String, filename: String? = nil, contentType: String? = nil,
        length: Int? = nil
    ) -> MultipartPart {
        MultipartPart(
            headers: disposition(name: name, filename: filename, contentType: contentType),
            content: .stream(stream, length: length.map(Int64.init)))
    }

    /// The content type file parts get for `filename`: from its extension by a built-in table of the common web
    /// types, then `/etc/mime.types`, else `application/octet-stream`.
    ///
    /// ```swift
    /// MultipartPart.contentType(forFilename: "photo.JPG")   // "image/jpeg"
    /// ```
    public static func contentType(forFilename filename: String) -> String {
        MediaTypes.type(forFilename: filename)
    }

    /// `Content-Disposition` and, for files or when given, `Content-Type`.
    static func disposition(name: String, filename: String?, contentType: String?) -> MultipartHeaders {
        var headers: MultipartHeaders = [
            .contentDisposition: ContentDisposition(name: name, filename: filename).headerValue
        ]
        if let type = contentType ?? filename.map(MediaTypes.type(forFilename:)) {
            headers.append(.contentType, type)
        }
        return headers
    }
}
