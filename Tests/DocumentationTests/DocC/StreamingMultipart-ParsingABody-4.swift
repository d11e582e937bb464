import StreamingMultipart

func uploadParser(contentType: String) throws -> MultipartParser {
    var limits = MultipartParser.Limits.default
    limits.maxParts = 20
    limits.maxFileBytes = 2 << 30
    return try MultipartParser(contentType: contentType, limits: limits, mode: .lenient)
}
