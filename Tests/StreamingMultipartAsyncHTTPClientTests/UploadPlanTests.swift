import AsyncHTTPClient
import Foundation
import NIOHTTP1
import StreamingMultipart
import Testing

@testable import StreamingMultipartAsyncHTTPClient

/// The decisions between attempts, without a network.
struct UploadPlanTests {
    func plan(
        _ url: String = "http://a.example/up", method: HTTPMethod = .POST, reproducible: Bool = true,
        retries: Int = 3, headers: HTTPHeaders = ["Content-Type": "multipart/form-data; boundary=x"]
    ) -> UploadPlan {
        var options = MultipartUploadOptions()
        options.retry = .init(attempts: retries, initialDelay: .seconds(1), maxDelay: .seconds(5))
        return UploadPlan(
            url: URL(string: url)!, method: method, headers: headers, bodyIsReproducible: reproducible,
            options: options)
    }

    @Test func theBackoffDoublesUpToItsLimit() throws {
        var plan = plan(retries: 5)
        var delays: [Duration] = []
        while case .retry(let delay, _) = try plan.next(afterStatus: 503, headers: [:]) { delays.append(delay) }
        #expect(delays == [.seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5)])
    }

    @Test func retryAfterIsHonouredInSecondsAndAsADateUpToTheLimit() throws {
        let now = Date(timeIntervalSince1970: 1_784_000_000)
        var plan = plan()
        #expect(
            try plan.next(afterStatus: 429, headers: ["Retry-After": "3"], now: now)
                == .retry(after: .seconds(3), reason: "HTTP 429"))
        let date = "Tue, 14 Jul 2026 03:33:22 GMT"  // 2 s after `now`
        #expect(MultipartRetry.retryAfter(date, now: now) == .seconds(2))
        #expect(
            try plan.next(afterStatus: 503, headers: ["Retry-After": "3600"], now: now)
                == .retry(after: .seconds(5), reason: "HTTP 503"))
        #expect(MultipartRetry.retryAfter("soon", now: now) == nil)
    }

    @Test(arguments: [200, 201, 400, 401, 404, 413, 415, 501, 505])
    func answersThatNoRetryChangesAreFinal(status: Int) throws {
        var plan = plan()
        #expect(try plan.next(afterStatus: status, headers: [:]) == .finish)
    }

    @Test func aOneShotBodyIsNeitherRetriedNorResent() throws {
        var plan = plan(reproducible: false)
        #expect(try plan.next(afterStatus: 503, headers: [:]) == .finish)
        #expect(try plan.next(afterStatus: 307, headers: ["Location": "/b"]) == .finish)
        #expect(plan.next(afterError: HTTPClientError.remoteConnectionClosed) == nil)
        #expect(try plan.next(afterStatus: 303, headers: ["Location": "/b"]) == .redirect(status: 303))
        #expect(!plan.sendsBody)
        #expect(try plan.next(afterStatus: 503, headers: [:]) != .finish, "a GET without the body can be sent again")
    }

    @Test func aRedirectToAnotherOriginDropsTheCredentials() throws {
        var plan = plan(headers: ["Authorization": "Bearer t", "Cookie": "c=1", "X-Trace": "1"])
        #expect(try plan.next(afterStatus: 307, headers: ["Location": "/same"]) == .redirect(status: 307))
        #expect(plan.headers["Authorization"] == ["Bearer t"])
        #expect(plan.url.absoluteString == "http://a.example/same")
        #expect(try plan.next(afterStatus: 308, headers: ["Location": "https://b.example/x"]) == .redirect(status: 308))
        #expect(plan.headers["Authorization"].isEmpty && plan.headers["Cookie"].isEmpty)
        #expect(plan.headers["X-Trace"] == ["1"])
        #expect(plan.method == .POST && plan.sendsBody)
    }

    @Test func only301And302OfAPostAnd303BecomeAGet() throws {
        for (method, status, get) in [
            (HTTPMethod.POST, 301, true), (.POST, 302, true), (.POST, 303, true), (.PUT, 302, false),
            (.PUT, 303, true), (.POST, 307, false), (.HEAD, 303, false),
        ] {
            var plan = plan(method: method)
            _ = try plan.next(afterStatus: status, headers: ["Location": "/next"])
            #expect((plan.method == .GET) == get || method == .HEAD, "\(method) \(status)")
            #expect(plan.sendsBody == !get, "\(method) \(status)")
            #expect(plan.headers["Content-Type"].isEmpty == get, "\(method) \(status)")
        }
    }

    @Test func aLocationThatIsNotHTTPIsNotFollowed() throws {
        var plan = plan()
        #expect(try plan.next(afterStatus: 307, headers: ["Location": "file:///etc/passwd"]) == .finish)
        #expect(try plan.next(afterStatus: 302, headers: [:]) == .finish)
    }

    @Test func onlyConnectionFailuresAreTransient() {
        #expect(UploadPlan.transientReason(HTTPClientError.remoteConnectionClosed) != nil)
        #expect(UploadPlan.transientReason(HTTPClientError.connectTimeout) != nil)
        #expect(UploadPlan.transientReason(HTTPClientError.invalidURL) == nil)
        #expect(UploadPlan.transientReason(CancellationError()) == nil)
    }
}
