/// A form parameter: a value, a list or a dictionary, flattened into text fields the way AFNetworking does.
///
/// Dictionaries become `key[subkey]` in sorted key order, lists `key[]` in their order, so one call turns a
/// parameters dictionary into fields that Rails, PHP, Express (`qs`) and AFNetworking servers read back:
///
/// ```swift
/// try body.append(parameters: [
///     "user": ["name": "Ann", "age": 41],
///     "tags": ["swift", "http"],
/// ])
/// // fields, in order: tags[]=swift, tags[]=http, user[age]=41, user[name]=Ann
/// ```
public enum MultipartParameter: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    case value(String)
    case list([MultipartParameter])
    case dictionary([String: MultipartParameter])

    public init(stringLiteral value: String) { self = .value(value) }
    public init(integerLiteral value: Int) { self = .value(String(value)) }
    public init(floatLiteral value: Double) { self = .value(String(value)) }
    /// `true` and `false` as AFNetworking sends `NSNumber` booleans: `1` and `0`.
    public init(booleanLiteral value: Bool) { self = .value(value ? "1" : "0") }
    public init(arrayLiteral elements: MultipartParameter...) { self = .list(elements) }
    public init(dictionaryLiteral elements: (String, MultipartParameter)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// The values this parameter holds, each with its path below `path`: dictionaries in sorted key order, lists in
    /// their order.
    func values(at path: FormKeyPath, into values: inout [(path: FormKeyPath, value: String)]) {
        switch self {
        case .value(let value):
            values.append((path, value))
        case .list(let items):
            for (index, item) in items.enumerated() { item.values(at: path.appending(.index(index)), into: &values) }
        case .dictionary(let entries):
            for key in entries.keys.sorted() { entries[key]!.values(at: path.appending(.key(key)), into: &values) }
        }
    }
}

extension MultipartBody {
    /// Appends a parameters dictionary as text fields: top-level keys in sorted order, nested dictionaries and lists
    /// named by `keyStrategy`, the encoder's naming. The default, `.emptyBrackets`, flattens as AFNetworking does
    /// (`key[subkey]`, `key[]` for every list item); `.brackets` numbers the items of lists of objects
    /// (`items[0][id]`), for servers that read `items[][id]` as one item per field (PHP, `qs`).
    ///
    /// A top-level key is a field name as sent (AFNetworking users write `"user[name]"` there); a nested key follows
    /// the encoder's rule: not empty, and without a character the strategy reads as nesting.
    ///
    /// - Throws: ``MultipartError/Code/invalidName`` for a nested key that breaks that rule; what ``append(_:)``
    ///   throws.
    public mutating func append(
        parameters: [String: MultipartParameter], keyStrategy: MultipartFormKeyStrategy = .emptyBrackets
    ) throws {
        var values: [(path: FormKeyPath, value: String)] = []
        for key in parameters.keys.sorted() {
            parameters[key]!.values(at: FormKeyPath().appending(.key(key)), into: &values)
        }
        for (path, value) in values {
            if let why = path.invalidKey(under: keyStrategy, from: 1) {
                throw MultipartError(
                    code: .invalidName, message: "the parameter \(path.name(keyStrategy).debugDescription): \(why)")
            }
            try append(.text(value, name: path.name(keyStrategy)))
        }
    }
}
