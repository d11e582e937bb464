import StreamingMultipart
import StreamingMultipartCrypto

/// What `POST /upload` answers: the fields, and each file with what the client said of it and what arrived.
///
/// The answer is bounded whatever the form: a field's value, a name and a filename are echoed up to `echoBytes`
/// bytes each (cut at a character), with the field's length beside it. An 8 MiB field of `0x01` once became a
/// 48 MB answer, which a client that never reads left in the server's memory.
struct UploadResult: Encodable {
    struct Field: Encodable {
        var name: String
        /// The value's first bytes, as text.
        var value: String
        /// The value's length in bytes, and whether `value` is cut short.
        var bytes: Int
        var truncated: Bool
    }

    struct File: Encodable {
        var field: String
        var filename: String
        var contentType: String?
        var size: Int64
        /// The file's digest in hex, under its algorithm's name (`--digest`).
        var sha256: String?
        var crc32c: String?
        /// The object's key, when the server stores files in a bucket (`--store`).
        var key: String?
        /// Where the file was kept (`--keep-dir`).
        var kept: String?
    }

    var fields: [Field]
    var files: [File]

    init(_ form: SpooledForm, echoBytes: Int) {
        fields = form.fields.map { field in
            let value = Self.prefix(field.value, bytes: echoBytes)
            return Field(
                name: Self.prefix(field.name, bytes: echoBytes), value: value, bytes: field.bytes.count,
                truncated: value.utf8.count < field.value.utf8.count)
        }
        files = form.files.map {
            File(
                field: Self.prefix($0.name, bytes: echoBytes), filename: Self.prefix($0.filename, bytes: echoBytes),
                contentType: $0.contentType.map { Self.prefix($0, bytes: echoBytes) }, size: $0.byteCount,
                sha256: $0.digest.flatMap { $0.algorithm == SHA256Digest.algorithm ? $0.hex : nil },
                crc32c: $0.digest.flatMap { $0.algorithm == CRC32CDigest.algorithm ? $0.hex : nil },
                key: $0.storedObject?.key)
        }
    }

    /// The longest prefix of `text` of whole characters in at most `bytes` UTF-8 bytes.
    static func prefix(_ text: String, bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        var count = 0
        var end = text.startIndex
        for index in text.indices {
            let next = text.index(after: index)
            count += text[index..<next].utf8.count
            if count > bytes { break }
            end = next
        }
        return String(text[..<end])
    }
}
