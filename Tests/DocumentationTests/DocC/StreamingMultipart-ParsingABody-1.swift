import StreamingMultipart

func fieldNames(in body: [UInt8], contentType: String) throws -> [String] {
    var parser = try MultipartParser(contentType: contentType)  // strict mode, safe default limits
    var names: [String] = []
    for start in stride(from: 0, to: body.count, by: 64 * 1024) {
        try parser.append(body[start..<min(start + 64 * 1024, body.count)])
        while let event = try parser.next() {
            switch event {
            case .partHeaders(let head): names.append(head.name)  // head.filename, head.contentType, head.headers
            case .bodyBytes, .partEnd, .end: break
            }
        }
    }
    try parser.finish()  // throws if the close delimiter never came
    return names
}
