import Foundation

/// Decodes a `Decodable` value from a spooled form: the names read back as ``MultipartFormEncoder`` writes them
/// (`user[name]`, `tags[]` or a repeated `tags`, `items[0][id]`; or dots), files as ``SpooledFile``,
/// ``MultipartFile`` or `Data`.
///
/// ```swift
/// struct Upload: Decodable {
///     var caption: String
///     var tags: [String]
///     var photo: SpooledFile
/// }
///
/// try await spooler.withSpooledForm(request.body, contentType: contentType) { form in
///     let upload = try MultipartFormDecoder().decode(Upload.self, from: form)
///     try upload.photo.move(to: "/srv/photos/\(UUID()).jpg")
/// }
/// ```
///
/// What each type reads:
/// - `String`: a text field's value; numbers and `Bool` (`true`/`false`, `1`/`0`, `on`/`off`) parsed from it, a
///   `Date` in ``dateStrategy``, `URL` and `Decimal` from their text;
/// - ``SpooledFile`` and ``MultipartFile``: a file part; `Data`: a file part's bytes (read whole) or a field's;
/// - arrays: a repeated name, `name[]` items, then `name[0]`, `name[1]`… in index order (gaps closed up);
/// - nested types: `name[key]` fields (`name.key` with `.dots`); an optional: nil when no field has its name.
///
/// A name sent twice where one value is expected fails rather than picking one of them, since servers disagree on
/// which one wins. A missing list decodes as empty (a form cannot send an empty list).
///
/// Errors are `DecodingError`s with the coding path and, in the description, the field name as sent; a form whose
/// names pass ``limits`` fails with `DecodingError.dataCorrupted` whose underlying error is the
/// ``MultipartError`` (``MultipartError/Code/limitExceeded``).
public struct MultipartFormDecoder: Sendable {
    /// How nested values and lists were named; `.brackets` unless set.
    public var keyStrategy: MultipartFormKeyStrategy = .brackets
    /// How dates were written; ISO 8601 unless set.
    public var dateStrategy: MultipartFormDateStrategy = .iso8601
    /// Bounds on the shapes field names may build.
    public var limits = Limits()
    /// Handed to the values' `init(from:)` as `Decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// Bounds on the shapes a form's names may build, each failing the decoding cleanly when passed. The parser's
    /// and spooler's limits bound the number and size of fields before these apply.
    public struct Limits: Sendable, Hashable {
        /// The most steps in a name: `a[b][c]` has 3. Default 32 (Rack's default); never more than
        /// ``depthCeiling``, however high it is set, so that a recursive type cannot be made to nest past the stack.
        public var maxDepth: Int {
            didSet { maxDepth = min(maxDepth, Self.depthCeiling) }
        }
        /// The deepest a name may nest whatever ``maxDepth`` says: 512, JSONDecoder's limit on nesting.
        public static let depthCeiling = 512
        /// The most items in one list, which also bounds an index (`items[9999]` is the last at the default
        /// 10,000): a hostile index allocates nothing.
        public var maxListLength: Int

        public init(maxDepth: Int = 32, maxListLength: Int = 10_000) {
            self.maxDepth = min(maxDepth, Self.depthCeiling)
            self.maxListLength = maxListLength
        }
    }

    public init() {}

    /// The value the form holds; the form itself when `T` is ``SpooledForm``.
    ///
    /// - Throws: `DecodingError`: `keyNotFound` for a field the type needs and the form lacks, `typeMismatch` for
    ///   a file where text is expected (or the reverse) or a name sent twice for one value, `dataCorrupted` for
    ///   text that is not the number, date or URL expected, and for a form past ``limits`` (with the
    ///   ``MultipartError`` as `underlyingError`); and what the type's own `init(from:)` throws.
    public func decode<T: Decodable>(_ type: T.Type, from form: SpooledForm) throws -> T {
        if let form = form as? T { return form }
        let root: FormNode
        do {
            root = try FormNode.tree(of: form, keyStrategy: keyStrategy, limits: limits)
        } catch let error as MultipartError {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [], debugDescription: error.message, underlyingError: error))
        }
        return try decode(type, root: root)
    }

    /// The value the tree from `root` holds.
    func decode<T: Decodable>(_ type: T.Type, root: FormNode) throws -> T {
        try FormDecoding(decoder: self).decode(T.self, .node(root), at: FormKeyPath())
    }
}
