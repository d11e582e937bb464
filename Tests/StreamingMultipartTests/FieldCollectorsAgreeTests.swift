import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

/// The two collectors of text fields, the spooler's and `decode(_:from: parts)`'s, read the same form the same way:
/// each field's charset by one rule (the part's own, else the form's `_charset_` wherever it stands, else UTF-8), the
/// same refusals, the same budget. A field list is run through both, and each value and each error compared.
@Suite struct FieldCollectorsAgreeTests {
    static let cafe1252: [UInt8] = [0x63, 0x61, 0x66, 0xE9]
    static let hiraganaA: [UInt8] = [0x82, 0xA0]  // あ in Shift_JIS

    /// Field lists: name, bytes, the part's Content-Type.
    static let forms: [[(String, [UInt8], String?)]] = [
        [("q", cafe1252, nil), ("_charset_", Array("windows-1252".utf8), nil)],
        [("_charset_", Array("windows-1252".utf8), nil), ("q", cafe1252, nil)],
        [("a", cafe1252, nil), ("_charset_", Array("Shift_JIS".utf8), nil), ("b", hiraganaA, nil)],
        [("q", hiraganaA, "text/plain; charset=Shift_JIS"), ("r", Array("é".utf8), nil)],
        [("q", hiraganaA, "text/plain; charset=Shift_JIS"), ("_charset_", Array("windows-1252".utf8), nil)],
        [("q", [0x66, 0xFF, 0x66], nil)],
        [("q", Array("é".utf8), nil), ("_charset_", Array("utf-8".utf8), nil)],
        [
            ("_charset_", Array("windows-1252".utf8), nil), ("_charset_", Array("Shift_JIS".utf8), nil),
            ("q", [0xE9], nil),
        ],
        [("q", [0x41], nil), ("_charset_", Array("x-klingon".utf8), nil)],
        [("_charset_", Array("x-klingon".utf8), nil), ("q", [0x41], nil)],
        [("q", [0x41], nil), ("r", [0x42], "text/plain; charset=utf-16"), ("_charset_", Array("latin1".utf8), nil)],
    ]

    /// What a collector made of a form: each field's name and value in order, or the error's code and message.
    enum Outcome: Equatable {
        case fields([String])
        case refused(MultipartError.Code, String)
    }

    @Test(arguments: forms.indices)
    func bothCollectorsReadAFormAlike(index: Int) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var body = MultipartBody()
        for (name, bytes, type) in Self.forms[index] {
            try body.append(.data(Data(bytes), name: name, contentType: type))
        }
        let bytes = try body.bytes()

        let spooled: Outcome
        do {
            let form = try await MultipartSpooler(directory: folder.url, limits: .untimed).spool(
                chunkStream(bytes, size: 3), contentType: body.contentType)
            // Through the decoder too, as a server that spools and then decodes does.
            let decoded = try MultipartFormDecoder().decode([String: [String]].self, from: form)
            spooled = .fields(form.fields.map { "\($0.name)=\($0.value)" })
            #expect(spooled == .fields(Self.inFormOrder(decoded, index)))
        } catch let error as MultipartError {
            spooled = .refused(error.code, error.message)
        }

        let streamed: Outcome
        do {
            let parts = try chunkStream(bytes, size: 3).multipartParts(contentType: body.contentType)
            let decoded = try await MultipartFormDecoder().decode([String: [String]].self, from: parts)
            streamed = .fields(Self.inFormOrder(decoded, index))
        } catch let DecodingError.dataCorrupted(context) {
            let error = try #require(context.underlyingError as? MultipartError)
            streamed = .refused(error.code, error.message)
        }
        #expect(spooled == streamed)
    }

    /// The decoded values as `name=value` in the order form `index` sent them: the dictionary keeps only the order
    /// of each name's values.
    static func inFormOrder(_ decoded: [String: [String]], _ index: Int) -> [String] {
        var seen: [String: Int] = [:]
        return forms[index].map { name, _, _ in
            defer { seen[name, default: 0] += 1 }
            return "\(name)=\(decoded[name]![seen[name, default: 0]])"
        }
    }

    @Test func aFormCharsetAfterItsFieldsIsHonoured() async throws {
        // The spooler's reading, checked by value rather than against the other collector.
        var body = MultipartBody()
        try body.append(.data(Data(Self.cafe1252), name: "q"))
        try body.append(.text("windows-1252", name: "_charset_"))
        let parts = try chunkStream(try body.bytes(), size: 2).multipartParts(contentType: body.contentType)
        struct Search: Decodable { var q: String }
        #expect(try await MultipartFormDecoder().decode(Search.self, from: parts).q == "café")
    }
}
