import StreamingMultipartUploadClient

/// The retry policy of an app's uploads: three more tries after a transient failure (refused, lost, 408, 429, a 5xx
/// but 501 and 505), waiting 1 s, then 2 s, then 4 s, or what the server's `Retry-After` asks, at most 30 s.
let uploadRetry = MultipartRetry(attempts: 3, initialDelay: .seconds(1), maxDelay: .seconds(30))
