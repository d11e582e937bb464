// The URLSession glue, a module of its own so that a server built on the core links neither FoundationNetworking
// nor libcurl. A client imports this module alone: it re-exports the core and the upload policy its options name.

public import Foundation
@_exported public import StreamingMultipart
@_exported public import StreamingMultipartUploadClient

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

extension URLRequest {
    /// Sets `Content-Type` and a fresh `httpBodyStream` for `body`, and `Content-Length` only where it is safe.
    ///
    /// On Apple platforms URLSession sends a stream body with the `Content-Length` set here when the body's length
    /// is known. On Linux, URLSession sends every stream body with `Transfer-Encoding: chunked` and would send a
    /// `Content-Length` beside it, a request that servers reject with 400; so on Linux this sets no
    /// `Content-Length` and removes one set before. For an exact `Content-Length` everywhere, use
    /// ``setMultipartBody(_:writingTo:compression:)`` and `uploadTask(with:fromFile:)`.
    ///
    /// URLSession does not resend a stream body on a redirect: answer `needNewBodyStream` with
    /// `body.makeInputStream()`, or upload from a file.
    ///
    /// ```swift
    /// var request = URLRequest(url: endpoint)
    /// request.httpMethod = "POST"
    /// request.setMultipartBody(body)
    /// let (data, response) = try await URLSession.shared.data(for: request)
    /// ```
    ///
    /// With `compression`, it also sets `Content-Encoding` and never a `Content-Length` (the compressed length is
    /// known only once the body is read; write it to a file for an exact one).
    public mutating func setMultipartBody(_ body: MultipartBody, compression: MultipartBody.Compression? = nil) {
        setValue(body.contentType, forHTTPHeaderField: "Content-Type")
        setValue(compression?.contentEncoding, forHTTPHeaderField: "Content-Encoding")
        #if canImport(FoundationNetworking)
        setValue(nil, forHTTPHeaderField: "Content-Length")
        #else
        setValue(compression == nil ? body.contentLength.map { String($0) } : nil, forHTTPHeaderField: "Content-Length")
        #endif
        httpBodyStream = body.makeInputStream(compression: compression)
    }

    /// Writes `body` to `fileURL` (atomically, see `MultipartBody.write(to:permissions:compression:)`) and sets
    /// `Content-Type` and the exact `Content-Length`, for `URLSession.uploadTask(with:fromFile:)`, which sends it on
    /// every platform and in background sessions.
    ///
    /// ```swift
    /// var request = URLRequest(url: endpoint)
    /// request.httpMethod = "POST"
    /// try request.setMultipartBody(body, writingTo: bodyFile)
    /// let (data, response) = try await URLSession.shared.upload(for: request, fromFile: bodyFile)
    /// ```
    ///
    /// - Parameters:
    ///   - body: the body to send.
    ///   - fileURL: the file to write it to, replaced whole or not at all.
    ///   - compression: compresses the body into the file and sets `Content-Encoding`; the `Content-Length` is the
    ///     exact compressed length.
    /// - Returns: the file's length.
    /// - Throws: what `MultipartBody.write(to:permissions:compression:)` throws.
    @discardableResult
    public mutating func setMultipartBody(
        _ body: MultipartBody, writingTo fileURL: URL, compression: MultipartBody.Compression? = nil
    ) throws -> Int64 {
        let length = try body.write(to: fileURL, compression: compression)
        setValue(body.contentType, forHTTPHeaderField: "Content-Type")
        setValue(compression?.contentEncoding, forHTTPHeaderField: "Content-Encoding")
        setValue(String(length), forHTTPHeaderField: "Content-Length")
        httpBodyStream = nil
        httpBody = nil
        return length
    }
}
