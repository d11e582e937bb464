import Foundation
import StreamingMultipartUploadClient
import Testing

/// A `104`'s `Location` is resumed only on the upload's own origin: a server (or whoever answers for it) cannot send
/// the client's appends, and the headers kept with them, to another host, port or scheme.
@Suite struct ResumeLocationTests {
    @Test(
        arguments: [
            ("/resumable/abc", "http://127.0.0.1:8080/resumable/abc"),
            ("http://127.0.0.1:8080/r/1", "http://127.0.0.1:8080/r/1"),
            ("http://127.0.0.1:8081/r/1", nil),
            ("https://127.0.0.1:8080/r/1", nil),
            ("http://localhost:8080/r/1", nil),
            ("ftp://127.0.0.1:8080/r/1", nil),
            ("//127.0.0.2:8080/r/1", nil),
        ] as [(String, String?)])
    func aLocationIsResumedOnlyOnTheUploadsOrigin(location: String, resumed: String?) throws {
        let upload = try #require(URL(string: "http://127.0.0.1:8080/upload"))
        #expect(ResumableUpload.resumeURL(location: location, upload: upload)?.absoluteString == resumed)
    }

    @Test func noLocationNoResumption() throws {
        let upload = try #require(URL(string: "http://127.0.0.1:8080/upload"))
        #expect(ResumableUpload.resumeURL(location: nil, upload: upload) == nil)
    }
}
