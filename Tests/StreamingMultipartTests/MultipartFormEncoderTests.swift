import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

@Suite struct MultipartFormEncoderTests {
    /// A value with each shape a form names: plain values, an omitted optional, lists of values, of objects and of
    /// lists, a nested object, a date. The decoder's tests read it back.
    struct Listing: Codable, Equatable {
        var title: String
        var price: Double
        var count: Int
        var onSale: Bool
        var note: String?
        var tags: [String]
        var seller: Seller
        var items: [Item]
        var grid: [[Int]]
        var listed: Date
        struct Seller: Codable, Equatable {
            var name: String
            var verified: Bool
        }
        struct Item: Codable, Equatable {
            var id: Int
            var size: String?
        }
    }

    static let listing = Listing(
        title: "Bike", price: 120.5, count: 2, onSale: false, note: nil, tags: ["red", "used"],
        seller: .init(name: "Ann", verified: true), items: [.init(id: 7, size: "M"), .init(id: 9, size: nil)],
        grid: [[1, 2], [3]], listed: Date(timeIntervalSince1970: 1_795_614_300))

    /// The fields a body holds, in order: name and text.
    func fields(_ body: MultipartBody) throws -> [String] {
        let parts = try #require(parse(try body.bytes(), boundary: body.boundary.value, splitAt: []).parts)
        return parts.map { "\($0.name)=\($0.text)" }
    }

    @Test func namesFollowTheBracketsConventionInEncodingOrder() throws {
        let body = try MultipartFormEncoder().encode(Self.listing)
        #expect(
            try fields(body) == [
                "title=Bike", "price=120.5", "count=2", "onSale=false", "tags[]=red", "tags[]=used",
                "seller[name]=Ann", "seller[verified]=true", "items[0][id]=7", "items[0][size]=M", "items[1][id]=9",
                "grid[0][]=1", "grid[0][]=2", "grid[1][]=3", "listed=2026-11-25T13:45:00Z",
            ])
        #expect(body.contentLength == Int64(try body.bytes().count))
    }

    @Test func dotsNameObjectsWithDotsAndRepeatPlainLists() throws {
        var encoder = MultipartFormEncoder()
        encoder.keyStrategy = .dots
        #expect(
            try fields(encoder.encode(Self.listing)) == [
                "title=Bike", "price=120.5", "count=2", "onSale=false", "tags=red", "tags=used", "seller.name=Ann",
                "seller.verified=true", "items[0].id=7", "items[0].size=M", "items[1].id=9", "grid[0]=1", "grid[0]=2",
                "grid[1]=3", "listed=2026-11-25T13:45:00Z",
            ])
    }

    struct Dated: Encodable {
        var at: Date
    }

    @Test(arguments: [
        (MultipartFormDateStrategy.iso8601, "2026-11-25T13:45:00Z"),
        (.secondsSince1970, "1795614300"),
        (.millisecondsSince1970, "1795614300000"),
    ])
    func datesFollowTheStrategy(strategy: MultipartFormDateStrategy, text: String) throws {
        var encoder = MultipartFormEncoder()
        encoder.dateStrategy = strategy
        #expect(try fields(encoder.encode(Dated(at: Date(timeIntervalSince1970: 1_795_614_300)))) == ["at=\(text)"])
    }

    @Test func aFormatterWritesDatesItsWay() throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy/MM/dd"
        var encoder = MultipartFormEncoder()
        encoder.dateStrategy = .formatter(formatter)
        #expect(try fields(encoder.encode(Dated(at: Date(timeIntervalSince1970: 1_795_614_300)))) == ["at=2026/11/25"])
    }

    struct WithFiles: Encodable {
        var caption: String
        var photo: URL
        var thumbnail: Data
        var attachment: MultipartFile
        var extra: [MultipartFile]
        var homepage: URL
    }

    @Test func dataFileURLsAndMultipartFilesBecomeFileParts() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let photo = try folder.file("sunset.jpg", contents: Array(repeating: 0xFF, count: 3000))
        let value = WithFiles(
            caption: "Sunset", photo: photo, thumbnail: Data([1, 2, 3]),
            attachment: MultipartFile(Data("a,b\n".utf8), filename: "table.csv", contentType: "text/csv"),
            extra: [
                MultipartFile(contentsOf: photo, filename: "copy.jpg"), MultipartFile(Data([9]), filename: "x.bin"),
            ],
            homepage: URL(string: "https://example.com/ann")!)
        let body = try MultipartFormEncoder().encode(value)
        #expect(body.parts.count == 7)
        let parts = try #require(parse(try body.bytes(), boundary: body.boundary.value, splitAt: []).parts)
        let summary = parts.map {
            "\($0.name)|\($0.head.filename ?? "-")|\($0.head.contentType ?? "-")|\($0.body.count)"
        }
        #expect(
            summary == [
                "caption|-|-|6", "photo|sunset.jpg|image/jpeg|3000", "thumbnail|thumbnail|application/octet-stream|3",
                "attachment|table.csv|text/csv|4", "extra[]|copy.jpg|image/jpeg|3000",
                "extra[]|x.bin|application/octet-stream|1", "homepage|-|-|23",
            ])
        #expect(parts[6].text == "https://example.com/ann")
        #expect(body.contentLength == Int64(try body.bytes().count))
    }

    @Test func aFileURLThatIsMissingFailsAtEncoding() throws {
        struct Upload: Encodable { var file: URL }
        #expect(throws: MultipartError.self) {
            try MultipartFormEncoder().encode(Upload(file: URL(fileURLWithPath: "/no/such/file.txt")))
        }
    }

    @Test func aDictionaryEncodesAsAnObject() throws {
        #expect(
            try fields(MultipartFormEncoder().encode(["b": ["x": 1], "a": ["y": 2]])).sorted() == ["a[y]=2", "b[x]=1"])
    }

    @Test func aTopLevelThatIsNotAnObjectIsRefused() throws {
        for value in [AnyEncodable("text"), AnyEncodable([1, 2]), AnyEncodable(Data([1]))] {
            #expect {
                try MultipartFormEncoder().encode(value)
            } throws: { error in
                guard case EncodingError.invalidValue(_, let context) = error else { return false }
                return context.debugDescription.contains("top level is an object")
            }
        }
    }

    @Test func aKeyThatWouldReadAsNestingIsRefused() throws {
        #expect {
            try MultipartFormEncoder().encode(["user": ["a[b]": "x"]])
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["user", "a[b]"]
                && context.debugDescription.contains("\"a[b]\"")
        }
        var dots = MultipartFormEncoder()
        dots.keyStrategy = .dots
        #expect(throws: EncodingError.self) { try dots.encode(["a.b": "x"]) }
        #expect(try fields(MultipartFormEncoder().encode(["a.b": "x"])) == ["a.b=x"])
        #expect(throws: EncodingError.self) { try MultipartFormEncoder().encode(["tags": ["": "x"]]) }
    }

    @Test func aNumberThatIsNotFiniteIsRefused() throws {
        #expect(throws: EncodingError.self) { try MultipartFormEncoder().encode(["x": Double.nan]) }
        #expect(throws: EncodingError.self) { try MultipartFormEncoder().encode(["x": [Float.infinity]]) }
    }

    @Test func emptyListsObjectsAndNilsSendNothing() throws {
        struct Sparse: Encodable {
            var a: [String] = []
            var b: [String: Int] = [:]
            var c: Int? = nil
            var d = "kept"
        }
        #expect(try fields(MultipartFormEncoder().encode(Sparse())) == ["d=kept"])
    }

    @Test func theBoundaryIsTheCallersWhenGiven() throws {
        let boundary = try MultipartBoundary("fixed-boundary")
        #expect(try MultipartFormEncoder().encode(["a": 1], boundary: boundary).boundary.value == "fixed-boundary")
    }
}

/// Any encodable value, to put unlike values in one list.
private struct AnyEncodable: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}
