import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// One naming of nested fields: the Codable encoder and `append(parameters:keyStrategy:)` name the same value the
/// same way under every strategy, and refuse the same keys, so the two cannot drift apart again.
@Suite struct FieldNamingTests {
    struct Order: Encodable {
        struct Item: Encodable {
            var id: Int
            var size: String
        }
        var buyer: [String: String]
        var items: [Item]
        var grid: [[Int]]
        var tags: [String]
        var title: String
    }

    static let order = Order(
        buyer: ["email": "a@example.com", "name": "Ann"], items: [.init(id: 7, size: "M"), .init(id: 9, size: "L")],
        grid: [[1, 2], [3]], tags: ["red", "used"], title: "Bike")

    /// The same value as parameters (their fields come in sorted key order, the encoder's in declaration order, and a
    /// dictionary's in its own, so the fields are compared as sets of lines).
    static let parameters: [String: MultipartParameter] = [
        "buyer": ["email": "a@example.com", "name": "Ann"],
        "items": [["id": 7, "size": "M"], ["id": 9, "size": "L"]],
        "grid": [[1, 2], [3]], "tags": ["red", "used"], "title": "Bike",
    ]

    func fields(_ body: MultipartBody) throws -> [String] {
        let parts = try #require(parse(try body.bytes(), boundary: body.boundary.value, splitAt: []).parts)
        return parts.map { "\($0.name)=\($0.text)" }
    }

    @Test(arguments: [MultipartFormKeyStrategy.brackets, .emptyBrackets, .dots])
    func theEncoderAndTheParametersNameAValueAlike(strategy: MultipartFormKeyStrategy) throws {
        var encoder = MultipartFormEncoder()
        encoder.keyStrategy = strategy
        var body = MultipartBody()
        try body.append(parameters: Self.parameters, keyStrategy: strategy)
        let encoded = try fields(encoder.encode(Self.order))
        #expect(try fields(body).sorted() == encoded.sorted())
        #expect(encoded.count == 12)
        let expected: [String] =
            switch strategy {
            case .brackets: ["items[0][id]=7", "items[1][size]=L", "grid[0][]=2", "tags[]=red", "buyer[name]=Ann"]
            case .emptyBrackets: ["items[][id]=7", "items[][size]=L", "grid[][]=2", "tags[]=red", "buyer[name]=Ann"]
            case .dots: ["items[0].id=7", "items[1].size=L", "grid[0]=2", "tags=red", "buyer.name=Ann"]
            }
        #expect(expected.allSatisfy(encoded.contains), "\(encoded)")
    }

    /// AFNetworking's flattening stays the parameters' default: `[]` for every list item, objects in lists too.
    @Test func parametersFlattenAsAFNetworkingByDefault() throws {
        var body = MultipartBody()
        try body.append(parameters: ["user": ["name": "Ann"], "items": [["id": 1]], "ok": true])
        #expect(try fields(body) == ["items[][id]=1", "ok=1", "user[name]=Ann"])
    }

    @Test(arguments: [MultipartFormKeyStrategy.brackets, .emptyBrackets, .dots])
    func bothRefuseANestedKeyTheStrategyWouldReadAsNesting(strategy: MultipartFormKeyStrategy) throws {
        struct Nested: Encodable { var user: [String: String] }
        for key in ["", "a[b]", strategy == .dots ? "a.b" : "a]"] {
            var encoder = MultipartFormEncoder()
            encoder.keyStrategy = strategy
            #expect(throws: EncodingError.self) { try encoder.encode(Nested(user: [key: "x"])) }
            var body = MultipartBody()
            #expect {
                try body.append(parameters: ["user": .dictionary([key: "x"])], keyStrategy: strategy)
            } throws: { error in
                (error as? MultipartError)?.code == .invalidName
            }
        }
        // A top-level parameter key is a name as sent, as AFNetworking users write them.
        var body = MultipartBody()
        try body.append(parameters: ["user[name]": "Ann"], keyStrategy: strategy)
        #expect(try fields(body) == ["user[name]=Ann"])
    }
}
