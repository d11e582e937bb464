import Crypto
import Foundation
import StreamingMultipart

extension S3Store.Configuration.Checksum {
    /// The algorithm's name as S3 spells it: `x-amz-checksum-algorithm`'s value, and `Checksum<name>` in a
    /// completion's part list.
    var algorithmName: String {
        switch self {
        case .sha256: "SHA256"
        case .crc32c: "CRC32C"
        }
    }

    /// The header a part's checksum goes in: `x-amz-checksum-sha256`, `x-amz-checksum-crc32c`.
    var headerName: String { "x-amz-checksum-" + algorithmName.lowercased() }

    /// The headers of a request that sends bytes with the checksum `value`: the checksum, and the algorithm as the
    /// SDKs name it (`x-amz-sdk-checksum-algorithm`, the `ChecksumAlgorithm` of `PutObject` and `UploadPart`).
    func headers(_ value: String) -> [(name: String, value: String)] {
        [("x-amz-sdk-checksum-algorithm", algorithmName), (headerName, value)]
    }

    /// The checksum of `part` (nil for no bytes) as its header carries it, base64, and the payload hash its request
    /// is signed with: the SHA-256 in hex, or `UNSIGNED-PAYLOAD` beside a CRC.
    ///
    /// ```swift
    /// S3Store.Configuration.Checksum.crc32c.of(part).value   // "4waSgw==" for the bytes "123456789"
    /// ```
    func of(_ part: PartBuffer?) -> (value: String, payloadHash: String) {
        switch self {
        case .sha256:
            let hash = part?.sha256() ?? SHA256.hash(data: [UInt8]())
            return (Data(hash).base64EncodedString(), SigV4Signer.hex(hash))
        case .crc32c:
            var empty = CRC32CDigest()
            return (Data(part?.crc32c() ?? empty.finalize()).base64EncodedString(), SigV4Signer.unsignedPayload)
        }
    }
}
