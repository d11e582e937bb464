import StreamingMultipart

/// Where a part's bytes go: a file, a buffer, a hash.
protocol PartSink {
    mutating func write(_ bytes: ArraySlice<UInt8>) throws
    mutating func close() throws
}

func parse(
    _ requestBody: some AsyncSequence<[UInt8], any Error>, contentType: String,
    open: (_ name: String, _ filename: String?) throws -> any PartSink
) async throws {
    var parser = try MultipartParser(contentType: contentType)  // strict, safe default limits
    var sink: (any PartSink)?
    for try await chunk in requestBody {
        try parser.append(chunk)
        while let event = try parser.next() {
            switch event {
            case .partHeaders(let head): sink = try open(head.name, head.filename)
            case .bodyBytes(let bytes): try sink?.write(bytes)
            case .partEnd: try sink?.close()
            case .end: break
            }
        }
    }
    try parser.finish()  // throws if the close delimiter never came
}
