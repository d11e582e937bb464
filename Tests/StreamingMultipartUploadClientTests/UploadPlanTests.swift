import Foundation
import StreamingMultipartUploadClient
import Testing

/// The decisions between attempts that both one-call uploads follow, without a network.
struct UploadPlanTests {
    func plan(
        _ url: String = "http://a.example/up", method: String = "POST", reproducible: Bool = true,
        retries: Int = 3, everyError: Bool = false,
        headers: [(name: String, value: String)] = [("Content-Type", "multipart/form-data; boundary=x")],
        insecure: Bool = false
    ) -> UploadPlan {
        var retry = MultipartRetry(attempts: retries, initialDelay: .seconds(1), maxDelay: .seconds(5))
        retry.retriesEveryError = everyError
        return UploadPlan(
            url: URL(string: url)!, method: method, headers: headers, bodyIsReproducible: reproducible,
            retry: retry, maxRedirects: 10, allowsInsecureRedirects: insecure)
    }

    /// A response's headers as the plan reads them: by name in any case.
    func answer(_ headers: [String: String] = [:]) -> (String) -> String? {
        { name in headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value }
    }

    @Test func theBackoffDoublesUpToItsLimit() {
        var plan = plan(retries: 5)
        var delays: [Duration] = []
        while case .retry(let delay, _) = plan.next(afterStatus: 503, header: answer()) { delays.append(delay) }
        #expect(delays == [.seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5)])
    }

    @Test func retryAfterIsHonouredInSecondsAndAsADateUpToTheLimit() {
        let now = Date(timeIntervalSince1970: 1_784_000_000)
        var plan = plan()
        #expect(
            plan.next(afterStatus: 429, header: answer(["Retry-After": "3"]), now: now)
                == .retry(after: .seconds(3), reason: "HTTP 429"))
        let date = "Tue, 14 Jul 2026 03:33:22 GMT"  // 2 s after `now`
        #expect(MultipartRetry.retryAfter(date, now: now) == .seconds(2))
        #expect(
            plan.next(afterStatus: 503, header: answer(["retry-after": "3600"]), now: now)
                == .retry(after: .seconds(5), reason: "HTTP 503"))
        #expect(MultipartRetry.retryAfter("soon", now: now) == nil)
    }

    @Test(arguments: [200, 201, 400, 401, 404, 413, 415, 501, 505])
    func answersThatNoRetryChangesAreFinal(status: Int) {
        var plan = plan()
        #expect(plan.next(afterStatus: status, header: answer()) == .finish)
    }

    @Test func aOneShotBodyIsNeitherRetriedNorResent() {
        var plan = plan(reproducible: false)
        #expect(plan.next(afterStatus: 503, header: answer()) == .finish)
        #expect(plan.next(afterStatus: 307, header: answer(["Location": "/b"])) == .finish)
        #expect(plan.next(afterFailure: "connection reset") == nil)
        #expect(plan.next(afterStatus: 303, header: answer(["Location": "/b"])) == .redirect(status: 303))
        #expect(!plan.sendsBody)
        #expect(plan.next(afterStatus: 503, header: answer()) != .finish, "a GET without the body can be sent again")
    }

    /// curl's `--retry-all-errors`: any answer of 400 or more and any failure, still within the attempts and never
    /// for a body that cannot be produced again.
    @Test func everyErrorIsRetriedWhenThePolicySaysSo() {
        var plan = plan(retries: 3, everyError: true)
        #expect(plan.next(afterStatus: 404, header: answer()) == .retry(after: .seconds(1), reason: "HTTP 404"))
        #expect(
            plan.next(afterFailure: nil, description: "TLS failed") == .retry(after: .seconds(2), reason: "TLS failed"))
        #expect(plan.next(afterStatus: 200, header: answer()) == .finish)
        #expect(plan.next(afterStatus: 413, header: answer()) == .retry(after: .seconds(4), reason: "HTTP 413"))
        #expect(plan.next(afterStatus: 413, header: answer()) == .finish, "no retry left")
        var oneShot = self.plan(reproducible: false, everyError: true)
        #expect(oneShot.next(afterStatus: 500, header: answer()) == .finish)
        #expect(oneShot.next(afterFailure: nil, description: "reset") == nil)
    }

    @Test func onlyATransientFailureIsRetried() {
        var plan = plan(retries: 1)
        #expect(plan.next(afterFailure: nil) == nil)
        #expect(plan.next(afterFailure: "refused") == .retry(after: .seconds(1), reason: "refused"))
        #expect(plan.next(afterFailure: "refused") == nil, "no retry left")
    }

    /// Every way out of an origin drops the three credentials, and none comes back on the way home.
    @Test(arguments: [
        "https://a.example/x", "http://b.example/x", "http://a.example:8080/x", "//b.example/x",
    ])
    func aRedirectToAnotherOriginDropsTheCredentialsForGood(location: String) {
        var plan = plan(
            headers: [
                ("Authorization", "Bearer t"), ("cookie", "c=1"), ("Proxy-Authorization", "Basic x"), ("X-Trace", "1"),
            ], insecure: true)  // so that the way back from https is followed too
        #expect(plan.next(afterStatus: 307, header: answer(["Location": "/same"])) == .redirect(status: 307))
        #expect(plan.values(of: "Authorization") == ["Bearer t"] && plan.values(of: "Cookie") == ["c=1"])
        #expect(plan.url.absoluteString == "http://a.example/same")
        #expect(plan.next(afterStatus: 308, header: answer(["Location": location])) == .redirect(status: 308))
        for name in UploadPlan.credentialHeaders { #expect(plan.values(of: name).isEmpty, "\(name)") }
        #expect(plan.values(of: "X-Trace") == ["1"])
        #expect(plan.method == "POST" && plan.sendsBody)
        #expect(
            plan.next(afterStatus: 307, header: answer(["Location": "http://a.example/up"])) == .redirect(status: 307))
        #expect(plan.values(of: "Authorization").isEmpty, "not restored on the way back")
    }

    @Test func theDefaultPortIsTheSameOrigin() {
        var plan = plan(headers: [("Authorization", "Bearer t")])
        _ = plan.next(afterStatus: 307, header: answer(["Location": "http://A.example:80/next"]))
        #expect(plan.values(of: "Authorization") == ["Bearer t"])
    }

    @Test func only301And302OfAPostAnd303BecomeAGet() {
        for (method, status, get) in [
            ("POST", 301, true), ("POST", 302, true), ("POST", 303, true), ("PUT", 302, false), ("PUT", 301, false),
            ("PUT", 303, true), ("POST", 307, false), ("PUT", 308, false), ("HEAD", 303, false),
        ] {
            var plan = plan(method: method)
            #expect(plan.next(afterStatus: status, header: answer(["Location": "/next"])) == .redirect(status: status))
            #expect((plan.method == "GET") == get, "\(method) \(status)")
            #expect(plan.sendsBody == !get, "\(method) \(status)")
            #expect(plan.values(of: "Content-Type").isEmpty == get, "\(method) \(status)")
        }
    }

    @Test func aLocationThatIsNotHTTPIsNotFollowed() {
        var plan = plan()
        #expect(plan.next(afterStatus: 307, header: answer(["Location": "file:///etc/passwd"])) == .finish)
        #expect(plan.next(afterStatus: 307, header: answer(["Location": "javascript:alert(1)"])) == .finish)
        #expect(plan.next(afterStatus: 302, header: answer()) == .finish)
    }

    @Test func httpsToHTTPIsFollowedOnlyWhenAllowed() {
        var refusing = plan("https://a.example/up", headers: [("Authorization", "Bearer t")])
        #expect(refusing.next(afterStatus: 307, header: answer(["Location": "http://a.example/up"])) == .finish)
        #expect(refusing.url.scheme == "https")
        var allowing = plan("https://a.example/up", headers: [("Authorization", "Bearer t")], insecure: true)
        #expect(
            allowing.next(afterStatus: 307, header: answer(["Location": "http://a.example/up"]))
                == .redirect(status: 307))
        #expect(allowing.values(of: "Authorization").isEmpty, "another scheme is another origin")
        var upgrading = plan("http://a.example/up")
        #expect(
            upgrading.next(afterStatus: 308, header: answer(["Location": "https://a.example/up"]))
                == .redirect(status: 308))
    }

    @Test func redirectsStopAtTheLimit() {
        var plan = UploadPlan(
            url: URL(string: "http://a.example/")!, method: "POST", headers: [], bodyIsReproducible: true,
            retry: .none, maxRedirects: 2)
        #expect(plan.next(afterStatus: 307, header: answer(["Location": "/1"])) == .redirect(status: 307))
        #expect(plan.next(afterStatus: 307, header: answer(["Location": "/2"])) == .redirect(status: 307))
        #expect(plan.next(afterStatus: 307, header: answer(["Location": "/3"])) == .redirectLimitReached)
        var none = UploadPlan(
            url: URL(string: "http://a.example/")!, method: "POST", headers: [], bodyIsReproducible: true,
            retry: .none, maxRedirects: 0)
        #expect(none.next(afterStatus: 307, header: answer(["Location": "/1"])) == .finish)
    }
}

/// The retry loop that the S3 store's requests run through, on the uploads' policy.
struct MultipartRetryRunTests {
    struct Flaky: Error { var transient: Bool }
    let transient: (any Error) -> Bool = { ($0 as? Flaky)?.transient == true }

    @Test func aTransientFailureIsTriedAgainUntilTheAttemptsAreUsedUp() async throws {
        let retry = MultipartRetry(attempts: 3, initialDelay: .zero)
        var tries = 0
        await #expect(throws: Flaky.self) {
            try await retry.run(retryingWhen: transient) {
                tries += 1
                throw Flaky(transient: true)
            }
        }
        #expect(tries == 4, "the first try and three retries")

        tries = 0
        let answer = try await retry.run(retryingWhen: transient) {
            tries += 1
            if tries < 3 { throw Flaky(transient: true) }
            return "done"
        }
        #expect(answer == "done" && tries == 3)
    }

    /// The waits double while the failures repeat, and start again from the first after a try that made progress
    /// (a resumed upload's append cut after sending some of the rest); the attempts count either way.
    @Test func progressStartsTheBackoffAgainAndTheAttemptsStillCount() async throws {
        let retry = MultipartRetry(attempts: 6, initialDelay: .milliseconds(100), maxDelay: .milliseconds(300))
        let progressed: Set<Int> = [3, 4]  // the tries that moved the work forward before they failed
        var tries = 0
        var waits: [Duration] = []
        let failing = {
            tries += 1
            throw Flaky(transient: true)
        }
        await #expect(throws: Flaky.self) {
            try await retry.run(
                retryingWhen: transient, madeProgress: { progressed.contains(tries) }, sleep: { waits.append($0) },
                failing)
        }
        #expect(tries == 7, "the first try and six retries")
        let ms = waits.map { Int($0 / .milliseconds(1)) }
        #expect(ms == [100, 200, 100, 100, 200, 300], "doubling, from the start after tries 3 and 4, capped")
    }

    @Test func aFailureThatIsNotTransientIsThrownAtOnce() async throws {
        var tries = 0
        await #expect(throws: Flaky.self) {
            try await MultipartRetry(attempts: 3, initialDelay: .zero).run(retryingWhen: transient) {
                tries += 1
                throw Flaky(transient: false)
            }
        }
        #expect(tries == 1)
    }
}
