import AsyncHTTPClient
import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

@testable import StreamingMultipartS3

/// The settings of the S3 store, its credentials from the environment, its URLs, and the XML it reads.
@Suite struct S3ConfigurationTests {
    func configuration(_ addressing: S3Store.Configuration.Addressing = .path) throws -> S3Store.Configuration {
        try S3Store.Configuration(
            endpoint: URL(string: "http://127.0.0.1:7480")!, bucket: "uploads", prefix: "forms/",
            credentials: .static(S3Credentials(accessKeyID: "AKID", secretAccessKey: "secret")), addressing: addressing)
    }

    @Test func partsGrowSoThatAFileOfUnknownLengthNeverRunsOutOfParts() throws {
        let configuration = try configuration()
        #expect(configuration.partSize(forPart: 1) == 8 << 20)
        #expect(configuration.partSize(forPart: 5_000) == 8 << 20)
        #expect(configuration.partSize(forPart: 5_001) == 16 << 20)
        #expect(configuration.partSize(forPart: 6_001) == 32 << 20)
        // What 10,000 parts hold: 536 GiB (5,000 parts of 8 MiB hold 40), each part within S3's 5 GiB.
        let sizes = (1...S3Store.Configuration.maxParts).map(configuration.partSize(forPart:))
        #expect(sizes.reduce(0, +) > 512 << 30 && sizes.max()! <= 5 << 30)
    }

    @Test func theRegionComesFromTheEnvironmentAsAWSToolsReadIt() throws {
        #expect(S3Store.Configuration.environmentRegion(["AWS_REGION": "eu-west-3"]) == "eu-west-3")
        #expect(
            S3Store.Configuration.environmentRegion(["AWS_REGION": "eu-west-3", "AWS_DEFAULT_REGION": "ap-south-1"])
                == "eu-west-3")
        let emptyRegion = ["AWS_REGION": "", "AWS_DEFAULT_REGION": "ap-south-1"]
        #expect(S3Store.Configuration.environmentRegion(emptyRegion) == "ap-south-1")
        #expect(S3Store.Configuration.environmentRegion([:]) == "us-east-1")
        // The configuration's default is the process's own.
        let configuration = try S3Store.Configuration(
            endpoint: URL(string: "http://127.0.0.1:7480")!, bucket: "uploads",
            credentials: .static(S3Credentials(accessKeyID: "AKID", secretAccessKey: "secret")))
        #expect(configuration.region == S3Store.Configuration.environmentRegion())
    }

    @Test func settingsOutOfRangeAreRefusedByName() throws {
        var configuration = try configuration()
        configuration.partSize = 5 << 20 - 1
        #expect(throws: S3Error.self) { try configuration.validate() }
        configuration.partSize = 5 << 20
        configuration.concurrency = 0
        #expect(throws: S3Error.self) { try configuration.validate() }
        #expect(throws: S3Error.self) {
            try S3Store.Configuration(
                endpoint: URL(string: "ftp://x")!, bucket: "b",
                credentials: .static(S3Credentials(accessKeyID: "a", secretAccessKey: "s")))
        }
        do {
            _ = try S3Store(configuration: configuration)
            Issue.record("a concurrency of 0 was taken")
        } catch let error as S3Error {
            #expect(error.code == .invalidConfiguration && error.message.contains("concurrency"))
        }
    }

    @Test func credentialsComeFromTheEnvironmentAndNeverPrintTheSecret() throws {
        let credentials = try S3Credentials.environment([
            "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "s3cr3t", "AWS_SESSION_TOKEN": "T0KEN-x",
        ])
        #expect(credentials == S3Credentials(accessKeyID: "AKID", secretAccessKey: "s3cr3t", sessionToken: "T0KEN-x"))
        #expect(!"\(credentials)".contains("s3cr3t") && !"\(credentials)".contains("T0KEN"))
        do {
            _ = try S3Credentials.environment(["AWS_ACCESS_KEY_ID": "AKID"])
            Issue.record("credentials without a secret")
        } catch let error as S3Error {
            #expect(error.code == .missingCredentials && error.message.contains("AWS_SECRET_ACCESS_KEY"))
        }
    }

    @Test func keysAreRandomUnderThePrefixAndURLsAddressTheBucketBothWays() throws {
        let configuration = try configuration()
        let file = MultipartStoreFile(name: "photo", filename: "../../etc/passwd", contentType: nil, partIndex: 0)
        let keys = (0..<100).map { _ in configuration.objectKey(for: file) }
        #expect(Set(keys).count == 100)
        #expect(
            keys.allSatisfy { $0.hasPrefix("forms/") && $0.dropFirst(6).allSatisfy(\.isHexDigit) && $0.count == 38 })
        var moved = configuration
        moved.prefix = "later/"  // set after init: the keys follow it
        #expect(moved.objectKey(for: file).hasPrefix("later/") && moved.objectKey(for: file).count == 38)
        moved.key = { "chosen/\($0.name)" }
        #expect(moved.objectKey(for: file) == "chosen/photo")

        let path = S3Client(configuration: configuration, http: .shared, logger: .disabled).location(of: "forms/a b+é")
        #expect(path.url == "http://127.0.0.1:7480/uploads/forms/a%20b%2B%C3%A9")
        #expect(path.path == "/uploads/forms/a b+é" && path.host == "127.0.0.1:7480")
        let hosted = S3Client(configuration: try self.configuration(.virtualHosted), http: .shared, logger: .disabled)
        #expect(hosted.location(of: "k").url == "http://uploads.127.0.0.1:7480/k")
        #expect(hosted.location(of: "k").host == "uploads.127.0.0.1:7480")
        #expect(hosted.location(of: nil).path == "/")
    }

    @Test func validateChecksTheEndpointAndBucketSetAfterInit() throws {
        var configuration = try configuration()
        try configuration.validate()
        configuration.bucket = "a/b"
        #expect { try configuration.validate() } throws: { error in
            (error as? S3Error)?.code == .invalidConfiguration && "\(error)".contains("bucket")
        }
        configuration = try self.configuration()
        #expect(configuration.requestTimeout == .seconds(300) && configuration.maxAnswerBytes == 16 << 20)
        configuration.requestTimeout = .zero
        #expect { try configuration.validate() } throws: { "\($0)".contains("requestTimeout") }
        configuration = try self.configuration()
        configuration.endpoint = URL(fileURLWithPath: "/tmp/s3")
        #expect { try configuration.validate() } throws: { error in
            (error as? S3Error)?.code == .invalidConfiguration && "\(error)".contains("endpoint")
        }
    }

    /// S3 retries what the one-call uploads retry (the same table), its own `SlowDown`, and an error in a 200
    /// answer (a completion that failed late).
    @Test func s3RetriesWhatTheUploadsRetryAndSlowDown() {
        for status in [201, 400, 403, 404, 408, 429, 500, 501, 503, 505] {
            let error = S3Error(code: .service, message: "", status: status)
            #expect(S3Retry.isTransient(error) == MultipartRetry.isTransient(status: status), "\(status)")
        }
        #expect(S3Retry.isTransient(S3Error(code: .service, message: "", serviceCode: "SlowDown", status: 400)))
        #expect(S3Retry.isTransient(S3Error(code: .transport, message: "reset")))
        #expect(S3Retry.isTransient(S3Error(code: .service, message: "", serviceCode: "InternalError", status: 200)))
        #expect(!S3Retry.isTransient(S3Error(code: .invalidConfiguration, message: "")))
        #expect(!S3Retry.isTransient(S3Error(code: .service, message: "", status: 501)))
    }

    @Test func s3sXMLIsReadForItsValuesAndEscapedWhenWritten() {
        let answer = "<Error><Code>NoSuchKey</Code><Message>a &lt;b&gt; &amp; &quot;c&quot;</Message></Error>"
        #expect(XMLText.value(of: "Code", in: answer) == "NoSuchKey")
        #expect(XMLText.value(of: "Message", in: answer) == "a <b> & \"c\"")
        #expect(XMLText.value(of: "RequestId", in: answer) == nil)
        #expect(XMLText.escaped("\"a&b\"") == "&quot;a&amp;b&quot;")
    }
}

@Suite struct SigV4TimestampTests {
    /// What Foundation's Gregorian calendar in UTC says of `date`, as the signer used to write it.
    static func calendarTimestamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(
            format: "%04d%02d%02dT%02d%02d%02dZ", parts.year!, parts.month!, parts.day!, parts.hour!, parts.minute!,
            parts.second!)
    }

    @Test func theTimestampIsTheCalendarsOnLeapDaysCenturiesAndSeededDates() {
        var dates = [
            "2015-08-30T12:36:00Z", "2000-02-29T23:59:59Z", "2100-03-01T00:00:00Z", "2024-12-31T23:59:59Z",
            "1970-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "2038-01-19T03:14:08Z", "2400-02-29T12:00:00Z",
        ].map { ISO8601DateFormatter().date(from: $0)! }
        var generator = SeededGenerator(seed: 0x5157_3456)
        for _ in 0..<5_000 {
            dates.append(Date(timeIntervalSince1970: Double.random(in: -1e10...1e10, using: &generator)))
        }
        for date in dates {
            #expect(SigV4Signer.timestamp(date) == Self.calendarTimestamp(date), "\(date.timeIntervalSince1970)")
        }
        #expect(SigV4Signer.timestamp(Date(timeIntervalSince1970: 1_440_938_160.75)) == "20150830T123600Z")
    }
}

@Suite struct SigningKeyTests {
    /// The day's key is derived once for every request of that day, and again for another day or a rotated secret,
    /// and a kept key signs as a fresh one would.
    @Test func theDaysKeyIsDerivedOnceAndMadeAnewForAnotherDayOrSecret() {
        let signer = SigV4Signer(credentials: S3Credentials(accessKeyID: "AKID", secretAccessKey: "one"), region: "r")
        let day = Date(timeIntervalSince1970: 1_440_938_160)
        func authorization(_ signer: SigV4Signer, _ date: Date) -> String {
            signer.authorization(
                for: SigV4Signer.Request(method: "GET", path: "/b/k", headers: [("host", "h")]),
                payloadHash: SigV4Signer.unsignedPayload, date: date)
        }
        let first = authorization(signer, day)
        for second in 1...50 { _ = authorization(signer, day + Double(second)) }
        #expect(signer.keys.derivations == 1)
        #expect(authorization(signer, day) == first)
        let fresh = SigV4Signer(credentials: signer.credentials, region: "r")
        #expect(authorization(fresh, day) == first, "a kept key signs as a new one")

        _ = authorization(signer, day + 86_400)
        #expect(signer.keys.derivations == 2, "the next day")
        var rotated = signer
        rotated.credentials = S3Credentials(accessKeyID: "AKID", secretAccessKey: "two")
        #expect(authorization(rotated, day + 86_400) != authorization(signer, day + 86_400))
        #expect(signer.keys.derivations == 4, "the rotated secret's key, then the old one's again")
    }
}
