import Foundation

/// The `Encoder` a value sees at one place in a form; its containers append parts to the ``FormEncoding``.
struct FormFieldEncoder: Encoder {
    let form: FormEncoding
    let path: FormKeyPath

    var codingPath: [any CodingKey] { path.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { form.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(Keyed(form: form, path: path))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer { Unkeyed(form: form, path: path) }

    func singleValueContainer() -> any SingleValueEncodingContainer { Single(form: form, path: path) }

    /// The text a form field holds for a number, or an error for one that is not finite.
    static func text<Number: BinaryFloatingPoint & LosslessStringConvertible>(_ value: Number, at path: FormKeyPath)
        throws -> String
    {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value, .init(codingPath: path.codingPath, debugDescription: "\(value) is not a number a form can hold"))
        }
        return String(value)
    }

    /// An object: each key one step deeper.
    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let form: FormEncoding
        let path: FormKeyPath
        var codingPath: [any CodingKey] { path.codingPath }

        private func at(_ key: Key) -> FormKeyPath { path.appending(.key(key.stringValue)) }
        private func text(_ text: String, _ key: Key, _ value: Any) throws {
            try form.appendText(text, at: at(key), value: value)
        }

        mutating func encodeNil(forKey key: Key) throws {}
        mutating func encode(_ value: Bool, forKey key: Key) throws { try text(String(value), key, value) }
        mutating func encode(_ value: String, forKey key: Key) throws { try text(value, key, value) }
        mutating func encode(_ value: Double, forKey key: Key) throws {
            try text(FormFieldEncoder.text(value, at: at(key)), key, value)
        }
        mutating func encode(_ value: Float, forKey key: Key) throws {
            try text(FormFieldEncoder.text(value, at: at(key)), key, value)
        }
        mutating func encode(_ value: Int, forKey key: Key) throws { try text(String(value), key, value) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { try text(String(value), key, value) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { try text(String(value), key, value) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { try text(String(value), key, value) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { try text(String(value), key, value) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { try text(String(value), key, value) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { try text(String(value), key, value) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { try text(String(value), key, value) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { try text(String(value), key, value) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { try text(String(value), key, value) }
        mutating func encode(_ value: some Encodable, forKey key: Key) throws { try form.encode(value, at: at(key)) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
            -> KeyedEncodingContainer<NestedKey>
        {
            KeyedEncodingContainer(Keyed<NestedKey>(form: form, path: at(key)))
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            Unkeyed(form: form, path: at(key))
        }
        mutating func superEncoder() -> any Encoder {
            FormFieldEncoder(form: form, path: path.appending(.key("super")))
        }
        mutating func superEncoder(forKey key: Key) -> any Encoder { FormFieldEncoder(form: form, path: at(key)) }
    }

    /// A list: each item at the next index.
    struct Unkeyed: UnkeyedEncodingContainer, FormValueEncoding {
        let form: FormEncoding
        let path: FormKeyPath
        private(set) var count = 0
        var codingPath: [any CodingKey] { path.codingPath }

        init(form: FormEncoding, path: FormKeyPath) {
            self.form = form
            self.path = path
        }

        /// The next item's path, counting it.
        mutating func place() -> FormKeyPath {
            defer { count += 1 }
            return path.appending(.index(count))
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
            -> KeyedEncodingContainer<NestedKey>
        {
            KeyedEncodingContainer(Keyed<NestedKey>(form: form, path: place()))
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            Unkeyed(form: form, path: place())
        }
        mutating func superEncoder() -> any Encoder { FormFieldEncoder(form: form, path: place()) }
    }

    /// One value at the encoder's own place.
    struct Single: SingleValueEncodingContainer, FormValueEncoding {
        let form: FormEncoding
        let path: FormKeyPath
        var codingPath: [any CodingKey] { path.codingPath }

        func place() -> FormKeyPath { path }
    }
}

/// What a list and a single value share: each value they encode is one part at their next place, so the primitive
/// `encode` overloads of both containers are written once, here.
protocol FormValueEncoding {
    var form: FormEncoding { get }
    /// Where the next value goes: the next index of a list, the single value's own path.
    mutating func place() -> FormKeyPath
}

extension FormValueEncoding {
    private mutating func text(_ text: String, _ value: Any) throws {
        try form.appendText(text, at: place(), value: value)
    }
    private mutating func number<Number: BinaryFloatingPoint & LosslessStringConvertible>(_ value: Number) throws {
        let at = place()
        try form.appendText(FormFieldEncoder.text(value, at: at), at: at, value: value)
    }

    mutating func encodeNil() throws {}
    mutating func encode(_ value: Bool) throws { try text(String(value), value) }
    mutating func encode(_ value: String) throws { try text(value, value) }
    mutating func encode(_ value: Double) throws { try number(value) }
    mutating func encode(_ value: Float) throws { try number(value) }
    mutating func encode(_ value: Int) throws { try text(String(value), value) }
    mutating func encode(_ value: Int8) throws { try text(String(value), value) }
    mutating func encode(_ value: Int16) throws { try text(String(value), value) }
    mutating func encode(_ value: Int32) throws { try text(String(value), value) }
    mutating func encode(_ value: Int64) throws { try text(String(value), value) }
    mutating func encode(_ value: UInt) throws { try text(String(value), value) }
    mutating func encode(_ value: UInt8) throws { try text(String(value), value) }
    mutating func encode(_ value: UInt16) throws { try text(String(value), value) }
    mutating func encode(_ value: UInt32) throws { try text(String(value), value) }
    mutating func encode(_ value: UInt64) throws { try text(String(value), value) }
    mutating func encode(_ value: some Encodable) throws { try form.encode(value, at: place()) }
}
