import AsyncHTTPClient
import Foundation
import StreamingMultipart
import Testing

@testable import StreamingMultipartS3

/// The settings of the S3 store, its credentials from the environment, its URLs, and the XML it reads.
@Suite struct S3ConfigurationTests {
    func configuration(_ addressing: S3Configuration.Addressing = .path) throws -> S3Configuration {
        try S3Configuration(
            endpoint: URL(string: "http://127.0.0.1:7480")!, bucket: "uploads", prefix: "forms/",
            credentials: S3Credentials(accessKeyID: "AKID", secretAccessKey: "secret"), addressing: addressing)
    }

    @Test func partsGrowSoThatAFileOfUnknownLengthNeverRunsOutOfParts() throws {
        let configuration = try configuration()
        #expect(configuration.partSize(forPart: 1) == 8 << 20)
        #expect(configuration.partSize(forPart: 5_000) == 8 << 20)
        #expect(configuration.partSize(forPart: 5_001) == 16 << 20)
        #expect(configuration.partSize(forPart: 6_001) == 32 << 20)
        // What 10,000 parts hold: 536 GiB (5,000 parts of 8 MiB hold 40), each part within S3's 5 GiB.
        let sizes = (1...S3Configuration.maxParts).map(configuration.partSize(forPart:))
        #expect(sizes.reduce(0, +) > 512 << 30 && sizes.max()! <= 5 << 30)
    }

    @Test func theRegionComesFromTheEnvironmentAsAWSToolsReadIt() throws {
        #expect(S3Configuration.environmentRegion(["AWS_REGION": "eu-west-3"]) == "eu-west-3")
        #expect(
            S3Configuration.environmentRegion(["AWS_REGION": "eu-west-3", "AWS_DEFAULT_REGION": "ap-south-1"])
                == "eu-west-3")
        #expect(
            S3Configuration.environmentRegion(["AWS_REGION": "", "AWS_DEFAULT_REGION": "ap-south-1"]) == "ap-south-1")
        #expect(S3Configuration.environmentRegion([:]) == "us-east-1")
        // The configuration's default is the process's own.
        let configuration = try S3Configuration(
            endpoint: URL(string: "http://127.0.0.1:7480")!, bucket: "uploads",
            credentials: S3Credentials(accessKeyID: "AKID", secretAccessKey: "secret"))
        #expect(configuration.region == S3Configuration.environmentRegion())
    }

    @Test func settingsOutOfRangeAreRefusedByName() throws {
        var configuration = try configuration()
        configuration.partSize = 5 << 20 - 1
        #expect(throws: S3Error.self) { try configuration.validate() }
        configuration.partSize = 5 << 20
        configuration.concurrency = 0
        #expect(throws: S3Error.self) { try configuration.validate() }
        #expect(throws: S3Error.self) {
            try S3Configuration(
                endpoint: URL(string: "ftp://x")!, bucket: "b",
                credentials: S3Credentials(accessKeyID: "a", secretAccessKey: "s"))
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
        let keys = (0..<100).map { _ in configuration.key(file) }
        #expect(Set(keys).count == 100)
        #expect(
            keys.allSatisfy { $0.hasPrefix("forms/") && $0.dropFirst(6).allSatisfy(\.isHexDigit) && $0.count == 38 })

        let path = S3Client(configuration: configuration, http: .shared).location(of: "forms/a b+é")
        #expect(path.url == "http://127.0.0.1:7480/uploads/forms/a%20b%2B%C3%A9")
        #expect(path.path == "/uploads/forms/a b+é" && path.host == "127.0.0.1:7480")
        let hosted = S3Client(configuration: try self.configuration(.virtualHosted), http: .shared)
        #expect(hosted.location(of: "k").url == "http://uploads.127.0.0.1:7480/k")
        #expect(hosted.location(of: "k").host == "uploads.127.0.0.1:7480")
        #expect(hosted.location(of: nil).path == "/")
    }

    @Test func s3sXMLIsReadForItsValuesAndEscapedWhenWritten() {
        let answer = "<Error><Code>NoSuchKey</Code><Message>a &lt;b&gt; &amp; &quot;c&quot;</Message></Error>"
        #expect(XMLText.value(of: "Code", in: answer) == "NoSuchKey")
        #expect(XMLText.value(of: "Message", in: answer) == "a <b> & \"c\"")
        #expect(XMLText.value(of: "RequestId", in: answer) == nil)
        #expect(XMLText.escaped("\"a&b\"") == "&quot;a&amp;b&quot;")
    }
}
