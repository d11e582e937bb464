import Foundation

/// Encodes an `Encodable` value into a ``MultipartBody``: one part per value, in encoding order, with the body's
/// exact `Content-Length`.
///
/// ```swift
/// struct Listing: Encodable {
///     var title: String
///     var price: Double
///     var tags: [String]
///     var seller: Seller
///     var photos: [URL]  // file URLs: file parts, read only when the body is read
///     struct Seller: Encodable { var name: String; var verified: Bool }
/// }
///
/// let body = try MultipartFormEncoder().encode(listing)
/// // title, price, tags[], tags[], seller[name], seller[verified], photos[], photos[]
/// ```
///
/// What each value becomes:
/// - strings, numbers, booleans (`true`/`false`), `Decimal`, web `URL`s: a text field;
/// - `Date`: a text field in ``dateStrategy``;
/// - `Data`: a file part named after its key (`application/octet-stream`);
/// - a file `URL`: a file part (`MultipartPart.file(at:name:filename:contentType:)`: its length is taken now, its
///   bytes read only when the body is read);
/// - ``MultipartFile``: a file part with its own filename and content type;
/// - `nil`: nothing (an optional left out); so are an empty list and an empty object, which a form cannot show;
/// - lists and nested objects: their values, named by ``keyStrategy`` (`tags[]`, `user[name]`, `items[0][id]`).
///
/// The top level is an object (a struct, a class, a dictionary with string keys). An empty key, and a key that
/// holds a character the key strategy reserves (`[`, `]`, and `.` under `.dots`), fail the encoding rather than
/// reading back as another nesting; so does a number that is not finite.
public struct MultipartFormEncoder: Sendable {
    /// How nested values and lists are named; `.brackets` unless set.
    public var keyStrategy: MultipartFormKeyStrategy = .brackets
    /// How dates are written; ISO 8601 unless set.
    public var dateStrategy: MultipartFormDateStrategy = .iso8601
    /// Handed to the values' `encode(to:)` as `Encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    public init() {}

    /// The form `value` encodes to.
    ///
    /// - Parameters:
    ///   - value: an object.
    ///   - boundary: the body's boundary; nil (the default) draws a random one, as `MultipartBody()` does (a boundary
    ///     given here makes readers watch file parts for it: `MultipartBody(boundary:)`).
    /// - Throws: `EncodingError.invalidValue` for a top level that is not an object, a reserved character in a
    ///   key, a number that is not finite; a file `URL` that cannot be read throws what
    ///   `MultipartPart.file(at:name:filename:contentType:)` throws; and whatever the value's own `encode(to:)`
    ///   throws.
    public func encode(_ value: some Encodable, boundary: MultipartBoundary? = nil) throws -> MultipartBody {
        let form = FormEncoding(body: boundary.map(MultipartBody.init(boundary:)) ?? MultipartBody(), encoder: self)
        try form.encode(value, at: FormKeyPath())
        return form.body
    }
}

/// One encoding in progress: the body so far, which every container appends to in encoding order.
final class FormEncoding {
    var body: MultipartBody
    let keyStrategy: MultipartFormKeyStrategy
    let dateStrategy: MultipartFormDateStrategy
    let userInfo: [CodingUserInfoKey: Any]

    init(body: MultipartBody, encoder: MultipartFormEncoder) {
        self.body = body
        self.keyStrategy = encoder.keyStrategy
        self.dateStrategy = encoder.dateStrategy
        self.userInfo = encoder.userInfo
    }

    /// Encodes `value` at `path`: a part for the values a form has a part for, else the value's own `encode(to:)`.
    func encode(_ value: some Encodable, at path: FormKeyPath) throws {
        switch value {
        case let date as Date:
            try appendText(dateStrategy.string(from: date), at: path, value: date)
        case let decimal as Decimal:
            try appendText(decimal.description, at: path, value: decimal)
        case let url as URL where url.isFileURL:
            try append(path, value: url) { try .file(at: url, name: $0) }
        case let url as URL:
            try appendText(url.absoluteString, at: path, value: url)
        case let data as Data:
            try append(path, value: data) { .data(data, name: $0, filename: path.lastKey ?? $0) }
        case let file as MultipartFile:
            try append(path, value: file) { try file.part(name: $0) }
        default:
            try value.encode(to: FormFieldEncoder(form: self, path: path))
        }
    }

    /// Appends a text field at `path`.
    func appendText(_ text: String, at path: FormKeyPath, value: Any) throws {
        try append(path, value: value) { .text(text, name: $0) }
    }

    /// Appends the part `makePart` makes for the field name of `path`, after checking its keys.
    private func append(_ path: FormKeyPath, value: Any, _ makePart: (String) throws -> MultipartPart) throws {
        let components = path.components
        guard case .key? = components.first else {
            throw EncodingError.invalidValue(
                value,
                .init(
                    codingPath: path.codingPath,
                    debugDescription: "a form's top level is an object with named fields, not \(type(of: value))"))
        }
        if let why = path.invalidKey(under: keyStrategy) {
            throw EncodingError.invalidValue(value, .init(codingPath: path.codingPath, debugDescription: why))
        }
        try body.append(makePart(path.name(keyStrategy)))
    }
}

extension FormKeyPath {
    /// The last object key on the path: the filename of a `Data` part.
    var lastKey: String? {
        components.reversed().lazy.compactMap { if case .key(let key) = $0 { key } else { nil } }.first
    }
}
