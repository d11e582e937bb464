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

    /// Each checksum as its header carries it (base64) and the payload hash its request is signed with: the
    /// SHA-256 signs the bytes, a CRC-32C goes beside `UNSIGNED-PAYLOAD`. The vectors are "123456789"'s (RFC 3720
    /// B.4's check value for CRC-32C, e3069283) and no bytes' (a file of none goes as one empty `PutObject`).
    @Test func eachChecksumIsWhatItsHeaderCarriesAndSignsWhatItCovers() {
        let part = PartBuffer(capacity: 1 << 10, budget: .shared)
        _ = part.append(Array("123456789".utf8)[...], upTo: 1 << 10)
        #expect(part.crc32c() == [0xE3, 0x06, 0x92, 0x83])
        let crc = S3Store.Configuration.Checksum.crc32c
        #expect(crc.headerName == "x-amz-checksum-crc32c" && crc.algorithmName == "CRC32C")
        #expect(crc.of(part) == ("4waSgw==", "UNSIGNED-PAYLOAD"))
        #expect(crc.of(nil) == ("AAAAAA==", "UNSIGNED-PAYLOAD"))
        let sha = S3Store.Configuration.Checksum.sha256
        #expect(sha.headerName == "x-amz-checksum-sha256" && sha.algorithmName == "SHA256")
        let nine = "15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225"
        #expect(sha.of(part) == ("FeKw08M4keuw8e9gnsQZQgwg4yDOlMZfvIwzEkSOsiU=", nine))
        let none = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        #expect(sha.of(nil) == ("47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", none))
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
