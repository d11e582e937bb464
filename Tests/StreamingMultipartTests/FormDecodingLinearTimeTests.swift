import MultipartTestSupport
import Testing

@testable import StreamingMultipart

/// Decoding hostile shapes grows linearly with the form: four times the fields must take well under eight times
/// the thread CPU time (a quadratic step gives sixteen). The forms are built in memory, past the spooler's limits,
/// to load the decoder alone.
@Suite(.serialized) struct FormDecodingLinearTimeTests {
    struct Shape: CustomTestStringConvertible, Sendable {
        var name: String
        /// The field names of a form of `count` fields.
        var names: @Sendable (Int) -> [String]
        /// What the form is decoded as.
        var decode: @Sendable (MultipartFormDecoder, SpooledForm) throws -> Void
        var testDescription: String { name }
    }

    static let shapes = [
        Shape(
            name: "one list of `[]` items", names: { Array(repeating: "a[]", count: $0) },
            decode: { _ = try $0.decode(Lists.self, from: $1) }),
        Shape(
            name: "a repeated name", names: { Array(repeating: "a", count: $0) },
            decode: { _ = try $0.decode([String: [String]].self, from: $1) }),
        Shape(
            name: "indexes in reverse", names: { count in (0..<count).reversed().map { "a[\($0)]" } },
            decode: { _ = try $0.decode([String: [String]].self, from: $1) }),
        Shape(
            name: "distinct keys", names: { count in (0..<count).map { "k\($0)" } },
            decode: { _ = try $0.decode([String: String].self, from: $1) }),
        Shape(
            name: "names 32 levels deep",
            names: { count in (0..<count / 32).map { "k\($0)" + String(repeating: "[a]", count: 31) } },
            decode: { decoder, form in
                _ = try FormNode.tree(
                    of: form, keyStrategy: .brackets, limits: decoder.limits)
            }),
    ]

    struct Lists: Decodable { var a: [String] }

    static func form(_ names: [String]) -> SpooledForm {
        let fields = names.enumerated().map { index, name in
            SpooledForm.Field(name: name, value: "x", bytes: [0x78], contentType: nil, partIndex: index)
        }
        return SpooledForm(fields: fields, files: [], charset: nil)
    }

    @Test(arguments: shapes)
    func decodingGrowsLinearly(shape: Shape) async throws {
        let decoder = {
            var decoder = MultipartFormDecoder()
            decoder.limits.maxListLength = .max
            return decoder
        }()
        let medium = Self.form(shape.names(50_000))
        let large = Self.form(shape.names(200_000))
        let run = { @Sendable (form: SpooledForm) throws -> Duration in
            try measureThreadCPUTime { try shape.decode(decoder, form) }.1
        }
        let growth = try await onThreadOfItsOwn {
            try linearGrowthRatio(limit: 8, medium: { try run(medium) }, large: { try run(large) })
        }
        #expect(growth.ratio < 8, "\(shape.name): \(growth.medium) for 50k fields, \(growth.large) for 200k")
    }
}
