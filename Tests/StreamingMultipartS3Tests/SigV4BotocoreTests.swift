import Foundation
import MultipartTestSupport
import Testing

@testable import StreamingMultipartS3

/// The signer against botocore's `S3SigV4Auth` on the same requests: random S3-shaped requests (keys with spaces,
/// `+`, `=`, non-ASCII; the multipart upload's queries; metadata and checksum headers; session tokens; times
/// across years), each signed by both, the `Authorization` headers compared.
@Suite struct SigV4BotocoreTests {
    static let python = Peers.python3(with: ["botocore"])

    @Test(.enabled(if: python != nil, "needs python3 with botocore (pip install boto3), the signer's peer"))
    func randomS3RequestsSignAsBotocoreSigns() throws {
        var random = SeededGenerator(seed: 18)
        let keyCharacters = Array("abcXYZ019-_.~ +=&%$@!'()*,;:/é漢😀")
        var requests: [SigV4Signer.Request] = []
        var peerInput: [[String: Any]] = []
        var expected: [String] = []
        for round in 0..<200 {
            let method = ["PUT", "POST", "GET", "DELETE", "HEAD"][Int(random.next() % 5)]
            let key = String(
                (0..<(1 + Int(random.next() % 24))).map { _ in keyCharacters.randomElement(using: &random)! })
            let path = "/bucket-\(round % 3)/" + key
            var query: [(name: String, value: String)] = []
            switch random.next() % 4 {
            case 0: query = [("uploads", "")]
            case 1: query = [("partNumber", "\(1 + random.next() % 10_000)"), ("uploadId", "id/\(random.next())+=")]
            case 2: query = [("list-type", "2"), ("prefix", key), ("max-keys", "1000")]
            default: break
            }
            let host = round % 2 == 0 ? "127.0.0.1:\(9000 + round)" : "bucket-\(round % 3).s3.eu-west-3.amazonaws.com"
            var headers: [(name: String, value: String)] = [("host", host)]
            if random.next() % 2 == 0 { headers.append(("Content-Type", "image/jpeg")) }
            if random.next() % 2 == 0 {
                headers.append(("x-amz-meta-filename", SigV4Signer.encode(key, keepingSlash: false)))
            }
            if random.next() % 2 == 0 { headers.append(("x-amz-checksum-crc32", "  AAAA  BBBB== ")) }
            let body = random.bytes(Int(random.next() % 300))
            let token: String? = random.next() % 3 == 0 ? "token/\(random.next())+==" : nil
            let region = ["us-east-1", "eu-west-3", "garage"][Int(random.next() % 3)]
            let seconds = 1_000_000_000 + Int(random.next() % 1_500_000_000)
            let credentials = S3Credentials(
                accessKeyID: "AKID\(round)", secretAccessKey: "secret/\(random.next())+", sessionToken: token)
            var request = SigV4Signer.Request(method: method, path: path, query: query, headers: headers)
            SigV4Signer(credentials: credentials, region: region).sign(
                &request, payloadHash: SigV4Signer.hexSHA256(of: Data(body)),
                date: Date(timeIntervalSince1970: TimeInterval(seconds)))
            requests.append(request)
            expected.append(request.header("Authorization")!)
            let encodedQuery = query.map {
                SigV4Signer.encode($0.name, keepingSlash: false) + "="
                    + SigV4Signer.encode($0.value, keepingSlash: false)
            }
            let queryPart: String = query.isEmpty ? "" : "?" + encodedQuery.joined(separator: "&")
            let url: String = "http://\(host)" + SigV4Signer.encode(path, keepingSlash: true) + queryPart
            peerInput.append([
                "method": method, "url": url,
                "headers": headers.map { [$0.name, $0.value] },
                "body_hex": body.map { String(format: "%02x", $0) }.joined(),
                "access": credentials.accessKeyID, "secret": credentials.secretAccessKey, "token": token ?? NSNull(),
                "region": region, "timestamp": seconds,
            ])
        }
        let input = try JSONSerialization.data(withJSONObject: peerInput)
        let result = try runProgram(Self.python!, [Repository.peerScript("sigv4_botocore.py")], input: Array(input))
        #expect(result.status == 0, "\(result.stderr)")
        let botocore = try JSONDecoder().decode([String].self, from: Data(result.stdout))
        #expect(botocore.count == expected.count)
        for (index, (ours, theirs)) in zip(expected, botocore).enumerated() {
            #expect(ours == theirs, "request \(index): \(requests[index].method) \(requests[index].path)")
        }
    }
}
