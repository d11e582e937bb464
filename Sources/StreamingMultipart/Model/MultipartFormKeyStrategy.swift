/// How nested values and lists are named in a form: the conventions servers read back into objects and arrays.
/// The Codable encoder and decoder and ``MultipartBody/append(parameters:keyStrategy:)`` name fields by it.
///
/// | value | `.brackets` (the encoder's default) | `.emptyBrackets` (AFNetworking's) | `.dots` |
/// |---|---|---|---|
/// | `user.name` | `user[name]` | `user[name]` | `user.name` |
/// | `tags: ["a", "b"]` | `tags[]`, `tags[]` | `tags[]`, `tags[]` | `tags`, `tags` |
/// | `items[0].id` | `items[0][id]` | `items[][id]` | `items[0].id` |
///
/// - `.brackets`: a list of plain values repeats `name[]`; a list of objects or lists numbers its items, since a
///   repeated `items[][id]` does not say where one item ends. PHP, Express (`qs`), Rails and ASP.NET read it.
/// - `.emptyBrackets`: every list item is `[]`, objects in lists too, as AFNetworking flattens parameters. Rails
///   (Rack) reads `items[][id]`, `items[][name]` back as one item per repeated key; PHP and `qs` make each field an
///   item of its own, so use `.brackets` for them.
/// - `.dots`: what Spring and ASP.NET model binding read; a list of plain values repeats its name.
///
/// The decoder reads both bracket strategies one way: `[0]` indexes an item, and each `items[][…]` field appends an
/// item of its own, as PHP reads it; so a list of objects of more than one field written `.emptyBrackets` (Rails'
/// grouping) does not read back into objects here, while `.brackets` does.
public enum MultipartFormKeyStrategy: Sendable, Hashable {
    case brackets
    case emptyBrackets
    case dots

    /// The characters a key may not hold under this strategy: they would read as nesting.
    var reserved: Set<Character> {
        switch self {
        case .brackets, .emptyBrackets: ["[", "]"]
        case .dots: ["[", "]", "."]
        }
    }
}
