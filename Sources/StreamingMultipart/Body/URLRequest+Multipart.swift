public import Foundation

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
    /// ``setMultipartBody(_:writingTo:)`` and `uploadTask(with:fromFile:)`.
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
    public mutating func setMultipartBody(_ body: MultipartBody) {
        setValue(body.contentType, forHTTPHeaderField: "Content-Type")
        #if canImport(FoundationNetworking)
        setValue(nil, forHTTPHeaderField: "Content-Length")
        #else
        setValue(body.contentLength.map { String($0) }, forHTTPHeaderField: "Content-Length")
        #endif
        httpBodyStream = body.makeInputStream()
    }

    /// Writes `body` to `fileURL` (atomically, see ``MultipartBody/write(to:permissions:)``) and sets `Content-Type` and the
    /// exact `Content-Length`, for `URLSession.uploadTask(with:fromFile:)`, which sends it on every platform and
    /// in background sessions.
    ///
    /// ```swift
    /// var request = URLRequest(url: endpoint)
    /// request.httpMethod = "POST"
    /// try request.setMultipartBody(body, writingTo: bodyFile)
    /// let (data, response) = try await URLSession.shared.upload(for: request, fromFile: bodyFile)
    /// ```
    ///
    /// - Returns: the body's length.
    @discardableResult
    public mutating func setMultipartBody(_ body: MultipartBody, writingTo fileURL: URL) throws -> Int64 {
        let length = try body.write(to: fileURL)
        setValue(body.contentType, forHTTPHeaderField: "Content-Type")
        setValue(String(length), forHTTPHeaderField: "Content-Length")
        httpBodyStream = nil
        httpBody = nil
        return length
    }
}
