import Foundation
import StreamingMultipartS3

/// The store for a server: its credentials fetched now, and said by their access key only.
func makeStore(bucket: String) async throws -> S3Store {
    let store = try S3Store(
        configuration: S3Store.Configuration(
            endpoint: URL(string: "https://s3.eu-west-3.amazonaws.com")!, bucket: bucket, credentials: .default()))
    let credentials = try await store.credentials()  // S3Error.missingCredentials says which provider failed
    print("signing as \(credentials.accessKeyID)", credentials.expiration.map { "until \($0)" } ?? "")
    return store
}
