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

    /// The `(name, value)` pairs this parameter flattens into under `key`.
    func flattened(key: String) -> [(name: String, value: String)] {
        switch self {
        case .value(let value):
            return [(key, value)]
        case .list(let items):
            return items.flatMap { $0.flattened(key: "\(key)[]") }
        case .dictionary(let entries):
            return entries.keys.sorted().flatMap { entries[$0]!.flattened(key: key.isEmpty ? $0 : "\(key)[\($0)]") }
        }
    }
}

extension MultipartBody {
    /// Appends a parameters dictionary as text fields, flattened as AFNetworking does: top-level keys in sorted
    /// order, `key[subkey]` for dictionaries (sorted), `key[]` for lists.
    ///
    /// - Throws: what ``append(_:)`` throws.
    public mutating func append(parameters: [String: MultipartParameter]) throws {
        for (name, value) in MultipartParameter.dictionary(parameters).flattened(key: "") {
            try append(.text(value, name: name))
        }
    }
}
