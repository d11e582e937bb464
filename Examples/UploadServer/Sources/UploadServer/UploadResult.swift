import StreamingMultipart

/// What `POST /upload` answers: the fields, and each file with what the client said of it and what arrived.
struct UploadResult: Encodable {
    struct Field: Encodable {
        var name: String
        var value: String
    }

    struct File: Encodable {
        var field: String
        var filename: String
        var contentType: String?
        var size: Int64
        var sha256: String?
    }

    var fields: [Field]
    var files: [File]

    init(_ form: SpooledForm) {
        fields = form.fields.map { Field(name: $0.name, value: $0.value) }
        files = form.files.map {
            File(
                field: $0.name, filename: $0.filename, contentType: $0.contentType, size: $0.byteCount,
                sha256: $0.digest?.hex)
        }
    }
}

/// The body of every error answer: `{"error":{"code","message","offset"}}`.
struct ErrorBody: Encodable {
    struct Detail: Encodable {
        var code: String
        var message: String
        var offset: Int64?
    }

    var error: Detail
}
