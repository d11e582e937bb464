import Foundation
import MultipartKit
import MultipartTestSupport
import PropertyBased
import StreamingMultipart
import Testing

/// Forms written by MultipartKit 4.7.1 (Vapor's `FormDataEncoder`) decode here to the same value, and forms written
/// here decode to the same value with its `FormDataDecoder`: on the types both support, which are text, numbers,
/// booleans, optionals, nested objects, and lists of these (MultipartKit names list items `tags[0]`, this package
/// `tags[]`; both read both).
@Suite struct MultipartKitInteropTests {
    struct Profile: Codable, Equatable {
        var name: String
        var age: Int
        var score: Double
        var admin: Bool
        var nickname: String?
        var tags: [String]
        var address: Address
        var pets: [Pet]
        var grid: [[Int]]

        struct Address: Codable, Equatable {
            var city: String
            var zip: String?
        }

        struct Pet: Codable, Equatable {
            var name: String
            var age: UInt8
        }
    }

    /// Any text, line breaks, quotes and brackets included.
    static let text = Gen<Character>.oneOf(
        Gen<Character?>.element(of: ["\r", "\n", "\r\n", "\"", "[", "]", "-", " ", "é", "👍🏽"]).map { $0! },
        Gen<Unicode.Scalar>.unicodeScalar(in: "\u{1}"..."\u{D7FF}").map { Character($0) }
    ).string(of: 0...12)

    /// MultipartKit's decoder wants a key for every list it reads, and an empty list sends none: lists have items.
    static let profile = zip(
        zip(text, Gen<Int>.int(), Gen.double(in: -1e9...1e9), Gen.bool, text.optional),
        zip(
            text.array(of: 1...4), zip(text, text.optional),
            Gen<Int>.int(in: -99...99).array(of: 1...3).array(of: 1...3)),
        zip(text, Gen<UInt8>.uint8()).array(of: 1...3)
    ).map { head, lists, pets in
        Profile(
            name: head.0, age: head.1, score: head.2, admin: head.3, nickname: head.4, tags: lists.0,
            address: .init(city: lists.1.0, zip: lists.1.1), pets: pets.map { .init(name: $0.0, age: $0.1) },
            grid: lists.2)
    }

    static let boundary = "interop-7f3c9a1e5b"

    @Test func whatMultipartKitEncodesDecodesHere() async {
        await propertyCheck(count: 200, input: Self.profile) { profile in
            let body = try FormDataEncoder().encode(profile, boundary: Self.boundary)
            #expect(body.contains(#"name="tags[0]""#) && body.contains(#"name="pets[0][name]""#))
            let folder = try TemporaryFolder()
            defer { folder.remove() }
            let form = try await MultipartSpooler(directory: folder.url, limits: .untimed)
                .spool(
                    chunkStream(Array(body.utf8), size: 509),
                    contentType: "multipart/form-data; boundary=\(Self.boundary)")
            defer { form.removeFiles() }
            #expect(try MultipartFormDecoder().decode(Profile.self, from: form) == profile)
        }
    }

    @Test func whatThisPackageEncodesDecodesWithMultipartKit() async {
        await propertyCheck(count: 200, input: Self.profile) { profile in
            let body = try MultipartFormEncoder().encode(profile, boundary: try MultipartBoundary(Self.boundary))
            let bytes = try body.bytes()
            #expect(String(decoding: bytes, as: UTF8.self).contains(#"name="tags[]""#))
            let decoded = try FormDataDecoder().decode(Profile.self, from: bytes, boundary: Self.boundary)
            #expect(decoded == profile)
        }
    }
}
