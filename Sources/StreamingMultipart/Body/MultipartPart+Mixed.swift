import Foundation

extension MultipartPart {
    /// Several files of field `name` nested in one `multipart/mixed` part, as `curl -F 'f=@a,b'` sends them: each
    /// file with `Content-Disposition: attachment; filename="…"` and its type (RFC 2388 §4.2).
    ///
    /// RFC 7578 §4.3 deprecates this form and many servers read it as one field holding the nested body; it is
    /// here for `multipart build` and `multipart send`, which take curl's arguments, and for tests. Send each file as
    /// a part of its own instead.
    ///
    /// - Parameter files: `(content, filename, contentType)` of each file, in order.
    package static func mixed(
        name: String, files: [(content: Content, filename: String, contentType: String)]
    ) -> MultipartPart {
        var inner = MultipartBody()
        for file in files {
            var disposition = ContentDisposition(name: nil, filename: file.filename)
            disposition.type = "attachment"
            let headers: MultipartHeaders = [
                "Content-Disposition": disposition.headerValue, "Content-Type": file.contentType,
            ]
            inner.parts.append(MultipartPart(headers: headers, content: file.content))
        }
        let nested = inner
        let headers: MultipartHeaders = [
            "Content-Disposition": ContentDisposition(name: name).headerValue,
            "Content-Type": nested.contentType.replacingOccurrences(of: "multipart/form-data", with: "multipart/mixed"),
        ]
        return MultipartPart(
            headers: headers, content: .stream(length: nested.contentLength) { nested.makeInputStream() })
    }
}
