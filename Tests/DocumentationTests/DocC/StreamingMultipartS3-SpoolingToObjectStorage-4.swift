import StreamingMultipartS3

/// At start: removes the forms and uploads a killed run left, older than the longest body any server may still send.
func sweepAtStart(_ store: S3Store) async throws -> Int {
    try await store.abortStaleUploads(olderThan: .seconds(3600))
}
