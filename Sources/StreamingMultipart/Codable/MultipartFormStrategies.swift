public import Foundation

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

extension FormKeyPath {
    /// The coding path the standard errors carry.
    var codingPath: [any CodingKey] { components.map(FormCodingKey.init) }

    /// The path an error's coding path names: a key with an integer value is a list index.
    init(codingPath: [any CodingKey]) {
        self = codingPath.reduce(FormKeyPath()) { path, key in
            path.appending(key.intValue.map { .index($0) } ?? .key(key.stringValue))
        }
    }
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
