import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import StreamingMultipart
import Testing

@testable import StreamingMultipartS3

/// A part's own buffer, and the chunks a request sends it in: the bytes exactly, nothing past the lease.
@Suite struct PartBufferTests {
    /// 300 KiB of bytes that repeat only every 251.
    let bytes = (0..<(300 << 10)).map { UInt8(truncatingIfNeeded: $0 % 251) }

    @Test func appendTakesWhatFitsBelowTheLimitAndHashesWhatItHolds() {
        let part = PartBuffer(capacity: 256 << 10, budget: .shared)
        #expect(part.append(bytes[0..<(100 << 10)], upTo: 200 << 10) == 100 << 10)
        // The limit, not the capacity, stops the second append.
        #expect(part.append(bytes[(100 << 10)...], upTo: 200 << 10) == 100 << 10)
        #expect(part.count == 200 << 10)
        #expect(part.append(bytes[0..<1], upTo: 200 << 10) == 0)
        #expect(Array(part.sha256()) == Array(SHA256.hash(data: bytes[0..<(200 << 10)])))
        // Emptied, it holds the next part from its start.
        part.removeAll()
        #expect(part.append(bytes[7..<(7 + 1000)], upTo: 1 << 20) == 1000)
        #expect(Array(part.sha256()) == Array(SHA256.hash(data: bytes[7..<(7 + 1000)])))
    }

    @Test func aRequestReadsThePartInChunksThatAddUpToIt() async throws {
        let part = PartBuffer(capacity: 300 << 10, budget: .shared)
        _ = part.append(bytes[...], upTo: 300 << 10)
        let loops = Array(HTTPClient.shared.eventLoopGroup.makeIterator())
        var sent: [UInt8] = []
        var chunks = 0
        for try await chunk in S3Client.PartChunks(lease: PartLease(part), loops: loops) {
            #expect(chunk.readableBytes <= S3Client.Body.chunkSize)
            sent += chunk.readableBytesView
            chunks += 1
        }
        #expect(sent == bytes)
        #expect(chunks == (bytes.count + S3Client.Body.chunkSize - 1) / S3Client.Body.chunkSize)
    }

    @Test func aLeaseEndedLetsGoOfThePartAndEndsItsBody() async throws {
        var part = PartBuffer(capacity: 300 << 10, budget: .shared)
        _ = part.append(bytes[...], upTo: 300 << 10)
        let lease = PartLease(part)
        var iterator = S3Client.PartChunks(lease: lease, loops: []).makeAsyncIterator()
        #expect(try await iterator.next()?.readableBytes == S3Client.Body.chunkSize)
        #expect(!isKnownUniquelyReferenced(&part))
        // S3 answered: the upload may fill the buffer with the next part, and a late reader gets no bytes of it.
        lease.end()
        #expect(isKnownUniquelyReferenced(&part))
        await #expect(throws: CancellationError.self) { try await iterator.next() }
        #expect(lease.count == bytes.count)
    }
}
