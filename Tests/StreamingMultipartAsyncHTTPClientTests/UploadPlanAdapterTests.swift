import AsyncHTTPClient
import Foundation
import NIOHTTP1
import StreamingMultipart
import Testing

@testable import StreamingMultipartAsyncHTTPClient

/// The core's plan in AsyncHTTPClient's types (the table itself is tested in the core's UploadPlanTests).
struct UploadPlanAdapterTests {
    @Test func headersAndMethodGoBothWays() {
        var options = HTTPClient.MultipartUploadOptions()
        options.retry = .none
        var plan = UploadPlan(
            url: URL(string: "http://a.example/up")!, method: .PUT,
            headers: ["Authorization": "Bearer t", "X-Trace": "1", "Content-Type": "multipart/form-data; boundary=x"],
            bodyIsReproducible: true, options: options)
        #expect(plan.httpMethod == .PUT)
        #expect(plan.next(afterStatus: 303, headers: ["location": "https://b.example/x"]) == .redirect(status: 303))
        #expect(plan.httpMethod == .GET)
        #expect(plan.httpHeaders.map(\.name) == ["X-Trace"])
    }

    @Test func insecureRedirectsFollowTheOption() {
        var options = HTTPClient.MultipartUploadOptions()
        options.allowsInsecureRedirects = true
        var plan = UploadPlan(
            url: URL(string: "https://a.example/up")!, method: .POST, headers: [:], bodyIsReproducible: true,
            options: options)
        #expect(plan.next(afterStatus: 307, headers: ["Location": "http://a.example/up"]) == .redirect(status: 307))
    }

    @Test func onlyConnectionFailuresAreTransient() {
        #expect(UploadPlan.transientReason(HTTPClientError.remoteConnectionClosed) != nil)
        #expect(UploadPlan.transientReason(HTTPClientError.connectTimeout) != nil)
        #expect(UploadPlan.transientReason(HTTPClientError.invalidURL) == nil)
        #expect(UploadPlan.transientReason(CancellationError()) == nil)
    }
}
