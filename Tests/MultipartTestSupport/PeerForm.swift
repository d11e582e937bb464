import Crypto
package import Foundation
package import StreamingMultipart

/// A part as a peer reports it, and as a test expects it.
package struct PeerPart: Codable, Hashable, Comparable {
    package var name: String
    package var filename: String?
    // swift-format-ignore: AlwaysUseLowerCamelCase
    package var content_type: String?  // the peer's JSON key
    package var size: Int
    package var sha256: String

    // swift-format-ignore: AlwaysUseLowerCamelCase
    package init(name: String, filename: String?, content_type: String?, size: Int, sha256: String) {
        self.name = name
        self.filename = filename
        self.content_type = content_type
        self.size = size
        self.sha256 = sha256
    }

    package static func < (a: PeerPart, b: PeerPart) -> Bool {
        (a.name, a.sha256, a.filename ?? "") < (b.name, b.sha256, b.filename ?? "")
    }
}

package struct PeerReply: Codable {
    package var method: String?
    /// The request's headers, names in lower case.
    package var headers: [String: String]?
    package var parts: [PeerPart]?
    // swift-format-ignore: AlwaysUseLowerCamelCase
    package var content_length: String?  // the peer's JSON keys
    // swift-format-ignore: AlwaysUseLowerCamelCase
    package var transfer_encoding: String?
    // swift-format-ignore: AlwaysUseLowerCamelCase
    package var content_encoding: String?
    package var received: Int?
    package var error: String?
}

package func sha256Hex(_ bytes: some DataProtocol) -> String {
    SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
}

/// A form built from random parts, with what a peer should find in it.
package struct RandomForm {
    package var body = MultipartBody()
    package var expected: [PeerPart] = []

    /// Random parts (see ``init(random:folder:maxSize:)``) and then a 3 MiB file part named "big", so that the
    /// body outgrows a socket's buffers: what the transport tests send.
    package init(seed: UInt64, folder: TemporaryFolder, maxSize: Int) throws {
        var random = SeededGenerator(seed: seed)
        try self.init(random: &random, folder: folder, maxSize: maxSize)
        let big = random.bytes(3 << 20)
        try body.append(.file(at: try folder.file("big.bin", contents: big), name: "big"))
        expected.append(
            PeerPart(
                name: "big", filename: "big.bin", content_type: "application/octet-stream", size: big.count,
                sha256: sha256Hex(big)))
    }

    /// Random text fields, in-memory files, file parts and stream parts; contents include CR, LF and prefixes of
    /// the boundary.
    package init(random: inout some RandomNumberGenerator, folder: TemporaryFolder, maxSize: Int) throws {
        let names = ["title", "résumé", "tags[]", "user[name]", "data", "x"]
        for index in 0..<Int.random(in: 1...6, using: &random) {
            let name = names.randomElement(using: &random)! + "\(index)"
            let size = Int.random(in: 0...maxSize, using: &random)
            var bytes = random.bytes(size)
            // Sprinkle delimiter near-misses: CRLF, "--", and the boundary without its last character.
            let nearMiss = Array("\r\n--\(body.boundary.value.dropLast())".utf8)
            for _ in 0..<min(3, size / max(1, nearMiss.count)) {
                let at = Int.random(in: 0...(size - nearMiss.count), using: &random)
                bytes.replaceSubrange(at..<(at + nearMiss.count), with: nearMiss)
            }
            switch Int.random(in: 0...3, using: &random) {
            case 0:
                let text = String(decoding: bytes.map { $0 % 90 + 32 } + Array("\r\n✓".utf8), as: UTF8.self)
                try body.append(.text(text, name: name))
                expected.append(
                    PeerPart(
                        name: name, filename: nil, content_type: nil, size: text.utf8.count,
                        sha256: sha256Hex(Array(text.utf8))))
            case 1:
                try body.append(.data(Data(bytes), name: name, filename: "\(name).bin"))
                expected.append(
                    PeerPart(
                        name: name, filename: "\(name).bin", content_type: "application/octet-stream",
                        size: size, sha256: sha256Hex(bytes)))
            case 2:
                let file = try folder.file("part\(index)-\(UUID().uuidString).png", contents: bytes)
                try body.append(.file(at: file, name: name, filename: "photo\(index).png"))
                expected.append(
                    PeerPart(
                        name: name, filename: "photo\(index).png", content_type: "image/png",
                        size: size, sha256: sha256Hex(bytes)))
            default:
                let data = Data(bytes)
                let length = Bool.random(using: &random) ? size : nil
                try body.append(
                    .stream(name: name, filename: "s\(index).csv", length: length) { InputStream(data: data) })
                expected.append(
                    PeerPart(
                        name: name, filename: "s\(index).csv", content_type: "text/csv",
                        size: size, sha256: sha256Hex(bytes)))
            }
        }
    }
}
