import Foundation

/// One decoding: the strategies, and the one place where a node becomes a value. A class, so that the decoders and
/// containers made for every value share it rather than copy it. The values themselves are in the tree's nodes.
final class FormDecoding {
    let keyStrategy: MultipartFormKeyStrategy
    let dateStrategy: MultipartFormDateStrategy
    let userInfo: [CodingUserInfoKey: Any]

    init(decoder: MultipartFormDecoder) {
        keyStrategy = decoder.keyStrategy
        dateStrategy = decoder.dateStrategy
        userInfo = decoder.userInfo
    }

    /// The `T` at `path`: the form's own types read here, the rest through their `init(from:)`. A nil value is a
    /// name the form did not send.
    func decode<T: Decodable>(_ type: T.Type, _ node: FormValue?, at path: FormKeyPath) throws -> T {
        if T.self == SpooledFile.self {
            return try file(node, at: path) as! T
        } else if T.self == MultipartFile.self {
            let file = try file(node, at: path)
            let source: MultipartFile.Source =
                if let path = file.path { .file(URL(fileURLWithPath: path)) } else { .data(Data(try file.contents())) }
            return MultipartFile(source: source, filename: file.filename, contentType: file.contentType) as! T
        } else if T.self == [String].self, let texts = texts(node) {
            return texts as! T
        } else if T.self == Data.self {
            let (owner, position) = try leaf(node, at: path, expecting: T.self)
            if let file = owner.leaves.files[position] { return Data(try file.contents()) as! T }
            return Data(owner.leaves.bytesAsSent[position] ?? Array(owner.leaves.texts[position].utf8)) as! T
        } else if T.self == Date.self {
            let text = try text(node, at: path, expecting: T.self)
            guard let date = dateStrategy.date(from: text) else { throw corrupted(text, T.self, node, path) }
            return date as! T
        } else if T.self == URL.self {
            let text = try text(node, at: path, expecting: T.self)
            guard let url = URL(string: text) else { throw corrupted(text, T.self, node, path) }
            return url as! T
        } else if T.self == Decimal.self {
            let text = try text(node, at: path, expecting: T.self)
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw corrupted(text, T.self, node, path)
            }
            return decimal as! T
        }
        return try T(from: FormFieldDecoder(decoding: self, node: node, path: path))
    }

    /// A list of text fields read in one go, the way `[String]` is decoded most often: the node's texts handed over
    /// whole, with no decoder, container or coding path for each item. Nil for anything else (a missing name,
    /// nested fields, a file), which `Array.init(from:)` then reads, with its errors.
    func texts(_ value: FormValue?) -> [String]? {
        guard case .node(let node)? = value, !node.leaves.isEmpty, !node.isContainer, node.leaves.files.isEmpty
        else { return nil }
        return node.leaves.texts
    }

    /// The one value at a place, as its node and its position there: a list's value, or a node sent once as a
    /// value rather than an object or a list.
    func leaf(_ value: FormValue?, at path: FormKeyPath, expecting type: Any.Type) throws -> (FormNode, Int) {
        let node: FormNode
        switch value {
        case .leaf(let owner, let position)?: return (owner, position)
        case .node(let found)?: node = found
        case nil:
            if case .key(let key)? = path.lastComponent {
                throw DecodingError.keyNotFound(
                    FormCodingKey(stringValue: key),
                    .form(
                        Array(path.codingPath.dropLast()), .missingField,
                        "the form has no field \(path.name(keyStrategy).debugDescription)"))
            }
            throw DecodingError.valueNotFound(
                type,
                .form(
                    path.codingPath, .missingField,
                    "the form has no value for \(path.name(keyStrategy).debugDescription)"))
        }
        guard node.leaves.count == 1, !node.isContainer else {
            let what =
                node.isContainer
                ? "fields nested under \(path.name(keyStrategy).debugDescription)"
                : "the field \(node.leaves.name(at: 0).debugDescription) \(node.leaves.count) times; decode a list"
            throw DecodingError.typeMismatch(
                type, .form(path.codingPath, .invalidField, "expected one value, the form sent \(what)"))
        }
        return (node, 0)
    }

    /// The text of a text field.
    func text(_ node: FormValue?, at path: FormKeyPath, expecting type: Any.Type) throws -> String {
        let (owner, position) = try leaf(node, at: path, expecting: type)
        if let file = owner.leaves.files[position] {
            throw DecodingError.typeMismatch(
                type,
                .form(
                    path.codingPath, .invalidField,
                    "the field \(file.name.debugDescription) is a file (\(file.filename.debugDescription)), "
                        + "not \(formKind(of: type))"))
        }
        return owner.leaves.texts[position]
    }

    /// The file of a file part.
    func file(_ node: FormValue?, at path: FormKeyPath) throws -> SpooledFile {
        let (owner, position) = try leaf(node, at: path, expecting: SpooledFile.self)
        guard let file = owner.leaves.files[position] else {
            throw DecodingError.typeMismatch(
                SpooledFile.self,
                .form(
                    path.codingPath, .invalidField,
                    "the field \(owner.leaves.name(at: position).debugDescription) is text, not a file"))
        }
        return file
    }

    /// The error for text that does not spell a `type`.
    func corrupted(_ text: String, _ type: Any.Type, _ node: FormValue?, _ path: FormKeyPath) -> DecodingError {
        let name = node.flatMap(firstName) ?? path.name(keyStrategy)
        return DecodingError.dataCorrupted(
            .form(
                path.codingPath, .invalidField,
                "the field \(name.debugDescription) holds \(String(text.prefix(64)).debugDescription), "
                    + "not \(type == Date.self ? "a date (\(dateStrategy))" : formKind(of: type))"))
    }

    /// The name the first value at a place was sent with, if any.
    func firstName(_ value: FormValue) -> String? {
        switch value {
        case .leaf(let owner, let position): owner.leaves.name(at: position)
        case .node(let node): node.leaves.isEmpty ? nil : node.leaves.name(at: 0)
        }
    }

    /// A number, or a `Bool`, from a field's text.
    func parse<Value>(_ type: Value.Type, _ node: FormValue?, _ path: FormKeyPath, _ parse: (String) -> Value?) throws
        -> Value
    {
        let text = try text(node, at: path, expecting: type)
        guard let value = parse(text) else { throw corrupted(text, type, node, path) }
        return value
    }

    /// `true`/`false`, `1`/`0`, and a checkbox's `on`/`off`.
    static func bool(_ text: String) -> Bool? {
        switch text {
        case "true", "1", "on": true
        case "false", "0", "off": false
        default: nil
        }
    }
}

/// The `Decoder` a value sees at one place in a form.
struct FormFieldDecoder: Decoder {
    let decoding: FormDecoding
    /// Nil where the form sent nothing under this name.
    let node: FormValue?
    let path: FormKeyPath

    var codingPath: [any CodingKey] { path.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { decoding.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        if let node, let name = decoding.firstName(node) {
            throw DecodingError.typeMismatch(
                [String: Any].self,
                .form(
                    codingPath, .invalidField,
                    "expected fields nested under \(path.name(decoding.keyStrategy).debugDescription), "
                        + "the form sent the field \(name.debugDescription) itself"))
        }
        guard case .node(let found)? = node else {
            return KeyedDecodingContainer(Keyed<Key>(decoding: decoding, node: FormNode(), path: path))
        }
        return KeyedDecodingContainer(Keyed<Key>(decoding: decoding, node: found, path: path))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let items: [FormValue]
        switch node {
        case nil: items = []
        case .leaf?: items = [node!]
        case .node(let node)?:
            guard node.children.isEmpty else {
                throw DecodingError.typeMismatch(
                    [Any].self,
                    .form(
                        codingPath, .invalidField,
                        "expected a list, the form sent fields nested under "
                            + path.name(decoding.keyStrategy).debugDescription))
            }
            items = node.items()
        }
        return Unkeyed(decoding: decoding, items: items, path: path)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }
}

extension FormFieldDecoder: SingleValueDecodingContainer {
    func decodeNil() -> Bool { node == nil }
    func decode(_ type: Bool.Type) throws -> Bool { try decoding.parse(type, node, path, FormDecoding.bool) }
    func decode(_ type: String.Type) throws -> String { try decoding.text(node, at: path, expecting: type) }
    func decode(_ type: Double.Type) throws -> Double { try decoding.parse(type, node, path) { Double($0) } }
    func decode(_ type: Float.Type) throws -> Float { try decoding.parse(type, node, path) { Float($0) } }
    func decode(_ type: Int.Type) throws -> Int { try decoding.parse(type, node, path) { Int($0) } }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoding.parse(type, node, path) { Int8($0) } }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoding.parse(type, node, path) { Int16($0) } }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoding.parse(type, node, path) { Int32($0) } }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoding.parse(type, node, path) { Int64($0) } }
    func decode(_ type: UInt.Type) throws -> UInt { try decoding.parse(type, node, path) { UInt($0) } }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoding.parse(type, node, path) { UInt8($0) } }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoding.parse(type, node, path) { UInt16($0) } }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoding.parse(type, node, path) { UInt32($0) } }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoding.parse(type, node, path) { UInt64($0) } }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoding.decode(type, node, at: path) }
}

extension FormFieldDecoder {
    /// An object: its children by key.
    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoding: FormDecoding
        let node: FormNode
        let path: FormKeyPath
        var codingPath: [any CodingKey] { path.codingPath }
        /// The keys in the order they came, then the `[i]` items' indexes, which read as keys too (`[Int: T]`).
        var allKeys: [Key] {
            (node.childOrder + node.indexed.keys.sorted().map(String.init)).compactMap { Key(stringValue: $0) }
        }

        func contains(_ key: Key) -> Bool { child(key) != nil }
        func decodeNil(forKey key: Key) throws -> Bool { !contains(key) }

        private func child(_ key: Key) -> FormValue? {
            let name = key.stringValue
            let found = node.children[name] ?? Int(name).flatMap { String($0) == name ? node.indexed[$0] : nil }
            return found.map(FormValue.node)
        }

        private func at(_ key: Key) -> FormFieldDecoder {
            FormFieldDecoder(decoding: decoding, node: child(key), path: path.appending(.key(key.stringValue)))
        }

        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try at(key).decode(type) }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try at(key).decode(type) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try at(key).decode(type) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try at(key).decode(type) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try at(key).decode(type) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try at(key).decode(type) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try at(key).decode(type) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try at(key).decode(type) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try at(key).decode(type) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try at(key).decode(type) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try at(key).decode(type) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try at(key).decode(type) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try at(key).decode(type) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try at(key).decode(type) }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try at(key).decode(type) }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            try at(key).container(keyedBy: type)
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try at(key).unkeyedContainer()
        }
        func superDecoder() throws -> any Decoder {
            FormFieldDecoder(
                decoding: decoding, node: node.children["super"].map(FormValue.node),
                path: path.appending(.key("super")))
        }
        func superDecoder(forKey key: Key) throws -> any Decoder { at(key) }
    }

    /// A list: its items in order.
    struct Unkeyed: UnkeyedDecodingContainer {
        let decoding: FormDecoding
        let items: [FormValue]
        let path: FormKeyPath
        private(set) var currentIndex = 0
        var codingPath: [any CodingKey] { path.codingPath }
        var count: Int? { items.count }
        var isAtEnd: Bool { currentIndex >= items.count }

        init(decoding: FormDecoding, items: [FormValue], path: FormKeyPath) {
            self.decoding = decoding
            self.items = items
            self.path = path
        }

        /// The next item, counting it.
        private mutating func next(_ type: Any.Type) throws -> FormFieldDecoder {
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(
                    type,
                    .form(
                        path.appending(.index(currentIndex)).codingPath, .missingField,
                        "the list \(path.name(decoding.keyStrategy).debugDescription) has \(items.count) items, "
                            + "fewer than expected"))
            }
            defer { currentIndex += 1 }
            return FormFieldDecoder(
                decoding: decoding, node: items[currentIndex], path: path.appending(.index(currentIndex)))
        }

        /// The next item's text, counted, when it is a text field: the way a list of strings is read, with no
        /// decoder or coding path made for each item. Nil (and not counted) for anything else, which `next` reads.
        private mutating func nextText() -> String? {
            guard currentIndex < items.count, case .leaf(let owner, let position) = items[currentIndex],
                owner.leaves.files[position] == nil
            else { return nil }
            currentIndex += 1
            return owner.leaves.texts[position]
        }

        mutating func decodeNil() throws -> Bool { false }
        mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type).decode(type) }
        mutating func decode(_ type: String.Type) throws -> String {
            if let text = nextText() { return text }
            return try next(type).decode(type)
        }
        mutating func decode(_ type: Double.Type) throws -> Double { try next(type).decode(type) }
        mutating func decode(_ type: Float.Type) throws -> Float { try next(type).decode(type) }
        mutating func decode(_ type: Int.Type) throws -> Int { try next(type).decode(type) }
        mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type).decode(type) }
        mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type).decode(type) }
        mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type).decode(type) }
        mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type).decode(type) }
        mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type).decode(type) }
        mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type).decode(type) }
        mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type).decode(type) }
        mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type).decode(type) }
        mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type).decode(type) }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            // `[String]` reads its items through here, not through decode(_: String.Type).
            if T.self == String.self, let text = nextText() { return text as! T }
            return try next(type).decode(type)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            try next(type).container(keyedBy: type)
        }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            try next([Any].self).unkeyedContainer()
        }
        mutating func superDecoder() throws -> any Decoder { try next(Any.self) }
    }
}
