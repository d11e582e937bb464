public import Foundation

/// How nested values and lists are named in a form: the conventions servers read back into objects and arrays.
///
/// | value | `.brackets` (the default) | `.dots` |
/// |---|---|---|
/// | `user.name` | `user[name]` | `user.name` |
/// | `tags: ["a", "b"]` | `tags[]`, `tags[]` | `tags`, `tags` |
/// | `items[0].id` | `items[0][id]` | `items[0].id` |
///
/// `.brackets` is what AFNetworking, Rails, PHP and Express (`qs`) write and read; `.dots` is what Spring and
/// ASP.NET model binding read. A list of plain values repeats its name (with `[]` under `.brackets`); a list of
/// objects or lists numbers its items, since repeating `items[][id]` would not say where one item ends.
public enum MultipartFormKeyStrategy: Sendable, Hashable {
    case brackets
    case dots

    /// The characters a key may not hold under this strategy: they would read as nesting.
    var reserved: Set<Character> {
        switch self {
        case .brackets: ["[", "]"]
        case .dots: ["[", "]", "."]
        }
    }
}

/// How a `Date` is written in a form field and read back from one.
public enum MultipartFormDateStrategy: Sendable {
    /// ISO 8601 in UTC, `2026-11-25T13:45:00Z`, as JSONEncoder's `.iso8601` (whole seconds); reading accepts
    /// fractional seconds and any offset too.
    case iso8601
    /// Seconds since 1970-01-01T00:00:00Z, `1795614300` (with a fraction only when there is one).
    case secondsSince1970
    /// Milliseconds since 1970-01-01T00:00:00Z, `1795614300000`.
    case millisecondsSince1970
    /// A formatter's `string(from:)` and `date(from:)`.
    case formatter(DateFormatter)

    /// The field's text for `date`.
    func string(from date: Date) -> String {
        switch self {
        case .iso8601: date.formatted(.iso8601)
        case .secondsSince1970: Self.number(date.timeIntervalSince1970)
        case .millisecondsSince1970: Self.number(date.timeIntervalSince1970 * 1000)
        case .formatter(let formatter): formatter.string(from: date)
        }
    }

    /// The date a field's text holds, or nil when it holds none in this strategy's form.
    func date(from text: String) -> Date? {
        switch self {
        case .iso8601:
            (try? Date(text, strategy: .iso8601))
                ?? (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        case .secondsSince1970:
            Double(text).flatMap { $0.isFinite ? Date(timeIntervalSince1970: $0) : nil }
        case .millisecondsSince1970:
            Double(text).flatMap { $0.isFinite ? Date(timeIntervalSince1970: $0 / 1000) : nil }
        case .formatter(let formatter):
            formatter.date(from: text)
        }
    }

    /// A number as an integer when it is whole, as JSONEncoder writes it.
    private static func number(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

/// Where a value sits in a form: object keys and list indexes from the top, rendered into a field name by a
/// ``MultipartFormKeyStrategy``.
///
/// A path is its last step and a shared reference to the path before it, so that going one level deeper costs one
/// small allocation whatever the depth (a path copied whole at each level cost the square of the depth); the
/// components and the coding path are put together only when asked for, for an error or a name.
struct FormKeyPath: Sendable {
    enum Component: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    /// One step, and the steps before it.
    private final class Step: Sendable {
        let component: Component
        let parent: Step?

        init(_ component: Component, parent: Step?) {
            self.component = component
            self.parent = parent
        }
    }

    private let last: Step?

    init() { last = nil }

    private init(last: Step) { self.last = last }

    func appending(_ component: Component) -> FormKeyPath {
        FormKeyPath(last: Step(component, parent: last))
    }

    /// The last step, if any.
    var lastComponent: Component? { last?.component }

    /// The steps from the top.
    var components: [Component] {
        var components: [Component] = []
        var step = last
        while let current = step {
            components.append(current.component)
            step = current.parent
        }
        return components.reversed()
    }

    /// The field name of a part that ends here. A list index names an item that holds more (`items[0][id]`), and
    /// is left out where the item is the part itself, so that a list of parts repeats one name (`tags[]`).
    ///
    /// `user` `name` → `user[name]` (`user.name`); `tags` `0` → `tags[]` (`tags`); `items` `0` `id` →
    /// `items[0][id]` (`items[0].id`).
    func name(_ strategy: MultipartFormKeyStrategy) -> String {
        var name = ""
        let components = components
        for (position, component) in components.enumerated() {
            switch component {
            case .key(let key) where position == 0:
                name += key
            case .key(let key):
                name += strategy == .brackets ? "[\(key)]" : ".\(key)"
            case .index where position == components.count - 1:
                name += strategy == .brackets ? "[]" : ""
            case .index(let index):
                name += "[\(index)]"
            }
        }
        return name
    }

    /// The coding path the standard errors carry.
    var codingPath: [any CodingKey] { components.map(FormCodingKey.init) }
}

/// A coding key for an object key or a list index, as `DecodingError`s and `EncodingError`s carry them.
struct FormCodingKey: CodingKey, Sendable {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }

    init(_ component: FormKeyPath.Component) {
        switch component {
        case .key(let key): self.init(stringValue: key)
        case .index(let index): self.init(intValue: index)
        }
    }
}
