import Foundation
import MultipartTestSupport
import StreamingMultipart
import StreamingMultipartURLSession
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `URLRequest.setMultipartBody`: the headers and the body source it sets, from a stream or from a file.
@Suite struct URLRequestTests {
    @Test func urlRequestFromAFileSetsAnExactContentLength() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var body = MultipartBody()
        try body.append(.file(at: Repository.input("notes.txt"), name: "notes"))
        var request = URLRequest(url: URL(string: "http://127.0.0.1:1/upload")!)
        let file = folder.url.appendingPathComponent("req.body")
        let length = try request.setMultipartBody(body, writingTo: file)
        #expect(request.value(forHTTPHeaderField: "Content-Length") == String(length))
        #expect(request.value(forHTTPHeaderField: "Content-Type") == body.contentType)
        #expect(request.httpBodyStream == nil)
        #expect(Int64(try Data(contentsOf: file).count) == length)
    }

    @Test func urlRequestWithAStreamSetsContentLengthOnlyWhereSafe() throws {
        var body = MultipartBody()
        try body.append(.text("x", name: "x"))
        var request = URLRequest(url: URL(string: "http://127.0.0.1:1/upload")!)
        request.setValue("999", forHTTPHeaderField: "Content-Length")
        request.setMultipartBody(body)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == body.contentType)
        #expect(request.httpBodyStream != nil)
        #if canImport(FoundationNetworking)
        // Linux URLSession sends stream bodies chunked; a Content-Length beside it would make a bad request.
        #expect(request.value(forHTTPHeaderField: "Content-Length") == nil)
        #else
        #expect(request.value(forHTTPHeaderField: "Content-Length") == body.contentLength.map { String($0) })
        #endif
    }

    @Test func urlRequestsSayTheEncodingAndOnlyAnExactLength() throws {
        var body = MultipartBody(boundary: try MultipartBoundary("zlib-test-7"))
        try body.append(.text("alpha", name: "a"))
        try body.append(.data(Data(repeating: 7, count: 100_000), name: "big", filename: "big.bin"))
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var streaming = URLRequest(url: URL(string: "http://127.0.0.1/")!)
        streaming.setMultipartBody(body, compression: .gzip)
        #expect(streaming.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
        #expect(streaming.value(forHTTPHeaderField: "Content-Length") == nil)
        var fromFile = URLRequest(url: URL(string: "http://127.0.0.1/")!)
        let file = folder.url.appendingPathComponent("upload.body")
        let length = try fromFile.setMultipartBody(body, writingTo: file, compression: .deflate)
        #expect(fromFile.value(forHTTPHeaderField: "Content-Encoding") == "deflate")
        #expect(fromFile.value(forHTTPHeaderField: "Content-Length") == String(length))
        #expect(try Data(contentsOf: file).count == Int(length))
    }
}
