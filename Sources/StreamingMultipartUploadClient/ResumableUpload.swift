package import Foundation

/// The client's side of resumable uploads (draft-ietf-httpbis-resumable-upload: interop version 8, draft 09, unless
/// told 6, drafts 04–05, as swift-nio-extras' `NIOResumableUpload` speaks it), for every transport: the headers of
/// each request and how to read the server's answers. The transport sends; this decides.
///
/// 1. The upload's request offers resumption (``creationHeaders(version:)``). A server that takes it answers
///    `104 Upload Resumption Supported` with the upload's `Location` before its final answer; a `104` of another
///    interop version than the one offered is ignored, as the draft asks.
/// 2. When the connection drops after that, the client asks where the server got to: `HEAD` the location
///    (``offsetRequestHeaders(version:)``), and reads `Upload-Offset` (``offset(_:)``).
/// 3. It sends the rest: `PATCH` the location with ``appendHeaders(offset:version:)`` and the body from that offset.
///    A `409` means the offset was stale: ask again. The final answer of the append is the upload's answer.
///
/// A location on another origin than the upload's is not followed (``resumeURL(location:upload:)``): the rest of
/// the body and the request's credentials go only where the first bytes went.
package enum ResumableUpload {
    /// The draft's interop version a client offers unless told another: 8, draft 09 (June 2025).
    package static let interopVersion = "8"

    /// The interop versions a client here can offer: 8 (draft 09) and 6 (drafts 04 and 05).
    package static let clientVersions: Set<String> = ["6", "8"]

    /// The fields that offer resumption on the upload's own request, in interop `version`.
    package static func creationHeaders(version: String = interopVersion) -> [(String, String)] {
        [("Upload-Draft-Interop-Version", version), ("Upload-Complete", "?1")]
    }

    /// Creates an upload without its bytes (a `POST` or `PUT` with an empty body) that says how long it will be: a
    /// server that takes resumable uploads answers `201 Created` with the location, and the body goes in an append.
    /// For a client that cannot see a `104`, as behind a proxy that does not pass one on.
    package static func emptyCreationHeaders(length: Int64, version: String = interopVersion) -> [(String, String)] {
        [("Upload-Draft-Interop-Version", version), ("Upload-Complete", "?0"), ("Upload-Length", String(length))]
    }

    /// The names of the fields that offer resumption (removed from what an append carries over).
    package static let creationFieldNames = ["Upload-Draft-Interop-Version", "Upload-Complete"]

    /// Asks for the offset (`HEAD` on the upload's location).
    package static func offsetRequestHeaders(version: String = interopVersion) -> [(String, String)] {
        [("Upload-Draft-Interop-Version", version)]
    }

    /// Sends the rest from `offset` (`PATCH` on the upload's location), as the whole of what is left.
    package static func appendHeaders(offset: Int64, version: String = interopVersion) -> [(String, String)] {
        [
            ("Upload-Draft-Interop-Version", version), ("Upload-Offset", String(offset)),
            ("Upload-Complete", "?1"), ("Content-Type", "application/partial-upload"),
        ]
    }

    /// The status of the interim answer that announces resumption.
    package static let announcementStatus = 104

    /// The upload's location from a `104`'s `Location`, resolved against the upload's URL; nil when it is missing,
    /// not http(s), or on another origin (scheme, host, port).
    package static func resumeURL(location: String?, upload: URL) -> URL? {
        guard let location, let url = URL(string: location, relativeTo: upload)?.absoluteURL,
            UploadPlan.sameOrigin(url, upload)
        else { return nil }
        return url
    }

    /// `Upload-Offset`: a structured-field integer (RFC 9651 §3.3.1: at most 15 digits), 0 or more; nil otherwise.
    package static func offset(_ value: String?) -> Int64? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), (1...15).contains(value.count),
            value.allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        return Int64(value)
    }

    /// `Upload-Complete: ?1`.
    package static func isComplete(_ value: String?) -> Bool {
        boolean(value) == true
    }

    // MARK: The server's side

    /// The interop versions a server here speaks: those `NIOResumableUpload` speaks, 3 (draft 01,
    /// `Upload-Incomplete`), 5 (draft 03) and 6 (drafts 04 and 05), and 8 (draft 09, June 2025). From 5 on the
    /// field is `Upload-Complete`; from 6 an append is `Content-Type: application/partial-upload`; 8 adds
    /// `Upload-Length` and requires `Upload-Limit` (on the `104`, the creation's answer, `HEAD` and `OPTIONS`).
    /// Version 7 (drafts 06 to 08) is not spoken: no client known here sends it.
    package static let serverVersions: Set<String> = ["3", "5", "6", "8"]

    /// Whether an append of interop `version` must be `Content-Type: application/partial-upload` (from version 6).
    package static func appendNeedsPartialUploadType(version: String) -> Bool { version != "3" && version != "5" }

    /// `Upload-Length` (draft 05 on): the whole representation's bytes, a structured-field integer; nil otherwise.
    package static func length(_ value: String?) -> Int64? { offset(value) }

    /// Whether a request of interop `version` says its end is the upload's end: `Upload-Complete: ?1` from version
    /// 5, `Upload-Incomplete: ?0` in version 3. Nil when the field is missing or not a structured-field boolean.
    package static func completes(version: String, field: (String) -> String?) -> Bool? {
        if version == "3" { return boolean(field("Upload-Incomplete")).map { !$0 } }
        return boolean(field("Upload-Complete"))
    }

    /// The field that says whether the upload is complete, as a client of interop `version` reads it.
    package static func completeField(_ complete: Bool, version: String) -> (String, String) {
        version == "3" ? ("Upload-Incomplete", complete ? "?0" : "?1") : ("Upload-Complete", complete ? "?1" : "?0")
    }

    /// A structured-field boolean (RFC 9651 §3.3.6): `?1` or `?0`; nil otherwise.
    private static func boolean(_ value: String?) -> Bool? {
        switch value?.trimmingCharacters(in: .whitespaces) {
        case "?1": true
        case "?0": false
        default: nil
        }
    }
}
