import StreamingMultipart

func send(_ body: MultipartBody, write: ([UInt8]) async throws -> Void) async throws {
    for try await chunk in body.chunks(size: 64 * 1024) {
        try await write(chunk)
    }
}
