/// The header fields of one part, in the order they were added or received.
///
/// Names compare case-insensitively (`Content-Type` equals `content-type`) and keep the spelling they were given.
/// A name may occur more than once; `headers[name]` gives the first value, ``values(for:)`` all of them.
///
/// ```swift
/// var headers: MultipartHeaders = ["Content-Disposition": #"form-data; name="note""#]
/// headers.append("X-Checksum", "abc123")
/// headers["content-disposition"]   // "form-data; name=\"note\""
/// ```
///
/// Values are kept as given; ``MultipartBody/append(_:)`` rejects names that are not RFC 9110 tokens and values
/// holding CR, LF or NUL, so that no value can inject a header or end the header block early.
public struct MultipartHeaders: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    /// A header name that compares case-insensitively and keeps its spelling.
    public struct Name: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The name as given, e.g. `Content-Type`.
        public let rawName: String

        /// Creates a name; its validity is checked when a part is appended to a body.
        public init(_ name: String) { rawName = name }

        public init(stringLiteral value: String) { self.init(value) }

        /// The name in ASCII lower case, e.g. `content-type`.
        public var canonicalName: String {
            String(decoding: rawName.utf8.map(Self.asciiLowercased), as: UTF8.self)
        }

        public var description: String { rawName }

        public static func == (lhs: Name, rhs: Name) -> Bool {
            if lhs.rawName == rhs.rawName { return true }  // the usual case, and a fast one
            var left = lhs.rawName
            var right = rhs.rawName
            guard left.utf8.count == right.utf8.count else { return false }
            return left.withUTF8 { a in
                right.withUTF8 { b in
                    for index in 0..<a.count where asciiLowercased(a[index]) != asciiLowercased(b[index]) {
                        return false
                    }
                    return true
                }
            }
        }

        public func hash(into hasher: inout Hasher) {
            for byte in rawName.utf8 { hasher.combine(Self.asciiLowercased(byte)) }
        }

        /// `Content-Disposition` (RFC 7578 §4.2).
        public static let contentDisposition: Name = "Content-Disposition"
        /// `Content-Type` (RFC 7578 §4.4).
        public static let contentType: Name = "Content-Type"

        static func asciiLowercased(_ byte: UInt8) -> UInt8 {
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
        }
    }

    /// One header field.
    public struct Field: Sendable, Hashable {
        public var name: Name
        public var value: String

        public init(name: Name, value: String) {
            self.name = name
            self.value = value
        }
    }

    private var fields: [Field]

    /// Creates headers from fields in order.
    public init(_ fields: [Field] = []) { self.fields = fields }

    public init(dictionaryLiteral elements: (Name, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    public var startIndex: Int { fields.startIndex }
    public var endIndex: Int { fields.endIndex }
    public subscript(position: Int) -> Field { fields[position] }

    /// The first value for `name`; setting replaces every field of that name with one (or removes them, for nil).
    public subscript(name: Name) -> String? {
        get { fields.first { $0.name == name }?.value }
        set {
            guard let newValue else { return remove(name) }
            guard let first = fields.firstIndex(where: { $0.name == name }) else {
                return append(name, newValue)
            }
            fields[first].value = newValue
            var index = fields.index(after: first)
            while let next = fields[index...].firstIndex(where: { $0.name == name }) {
                fields.remove(at: next)
                index = next
            }
        }
    }

    /// Every value for `name`, in order.
    public func values(for name: Name) -> [String] {
        fields.filter { $0.name == name }.map(\.value)
    }

    /// Adds a field at the end, keeping any earlier field of the same name.
    public mutating func append(_ name: Name, _ value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Removes every field named `name`.
    public mutating func remove(_ name: Name) {
        fields.removeAll { $0.name == name }
    }
}
