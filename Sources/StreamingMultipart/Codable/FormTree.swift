/// A form's fields arranged by their names' nesting, for ``MultipartFormDecoder``: `user[name]` under `user`,
/// `tags[]` and a repeated `tags` as list items, `items[0][id]` under item 0.
///
/// Building it is linear in the total length of the names: each name is read once, left to right, and stops at
/// ``MultipartFormDecoder/Limits/maxDepth``; every step is a dictionary lookup or an append.
final class FormNode {
    /// The values a name ending here sent, in order: one for a plain field, several for a repeated name or `name[]`.
    var leaves: [FormLeaf] = []
    /// `name[key]` (or `name.key`) children, and their keys in the order they first came.
    var children: [String: FormNode] = [:]
    var childOrder: [String] = []
    /// `name[]` items that hold more (`name[][key]`), in order.
    var appended: [FormNode] = []
    /// `name[3]` items, by index.
    var indexed: [Int: FormNode] = [:]

    /// How many list items this node holds in all.
    var itemCount: Int { leaves.count + appended.count + indexed.count }

    /// Whether the node holds anything other than values: children or list items.
    var isContainer: Bool { !children.isEmpty || !appended.isEmpty || !indexed.isEmpty }

    /// The node as a list: its values (a repeated name, `name[]`) in order, then its `name[][key]` items, then its
    /// `[i]` items in index order.
    func items() -> [FormNode] {
        var items = leaves.map { leaf in
            let node = FormNode()
            node.leaves = [leaf]
            return node
        }
        items += appended
        items += indexed.keys.sorted().map { indexed[$0]! }
        return items
    }

    func child(_ key: String) -> FormNode {
        if let node = children[key] { return node }
        let node = FormNode()
        children[key] = node
        childOrder.append(key)
        return node
    }
}

/// One value of a form: a text field or a file.
enum FormLeaf {
    case field(SpooledForm.Field)
    case file(SpooledFile)

    /// The field name as the client sent it.
    var name: String {
        switch self {
        case .field(let field): field.name
        case .file(let file): file.name
        }
    }

    var partIndex: Int {
        switch self {
        case .field(let field): field.partIndex
        case .file(let file): file.partIndex
        }
    }
}

/// A step of a field name: what `[key]`, `.key`, `[3]` and `[]` say.
enum FormNameStep: Equatable {
    case key(String)
    case index(Int)
    case append
}

extension FormNode {
    /// A tree of `leaves`, which come in the form's order.
    ///
    /// - Throws: ``MultipartError/Code/limitExceeded`` when a name nests deeper than `limits.maxDepth`, or a list
    ///   would hold more than `limits.maxListLength` items or an index of `limits.maxListLength` or more.
    static func tree(
        of leaves: some Sequence<FormLeaf>, keyStrategy: MultipartFormKeyStrategy, limits: MultipartFormDecoder.Limits
    ) throws -> FormNode {
        let root = FormNode()
        for leaf in leaves {
            let steps = try FormNameStep.steps(of: leaf.name, keyStrategy: keyStrategy, limits: limits, leaf: leaf)
            var node = root
            // A last `[]` adds the value to the list itself, as a repeated name does: no node for one value.
            let appendsValue = steps.last == .append
            for step in appendsValue ? steps.dropLast() : steps[...] {
                switch step {
                case .key(let key):
                    node = node.child(key)
                case .index(let index):
                    if let item = node.indexed[index] {
                        node = item
                    } else {
                        try node.checkRoom(for: leaf, limits: limits)
                        let item = FormNode()
                        node.indexed[index] = item
                        node = item
                    }
                case .append:
                    try node.checkRoom(for: leaf, limits: limits)
                    let item = FormNode()
                    node.appended.append(item)
                    node = item
                }
            }
            if !node.leaves.isEmpty || appendsValue { try node.checkRoom(for: leaf, limits: limits) }
            node.leaves.append(leaf)
        }
        return root
    }

    private func checkRoom(for leaf: FormLeaf, limits: MultipartFormDecoder.Limits) throws {
        guard itemCount < limits.maxListLength else {
            throw FormNameStep.limitError(
                "the field \(leaf.name.debugDescription) makes a list of more than \(limits.maxListLength) items "
                    + "(maxListLength)", leaf: leaf)
        }
    }
}

extension FormNameStep {
    /// The steps of `name`: `user[name]` → `user`, `name`; `tags[]` → `tags`, append; `items[0].id` (dots) →
    /// `items`, 0, `id`. A name that does not follow the strategy's grammar (`a[b`, `a[b]c`, `[x]`) is one key,
    /// the whole name, as sent.
    ///
    /// An index is `0` or digits without a leading zero, at most `maxListLength - 1`; other bracketed text is a key.
    static func steps(
        of name: String, keyStrategy: MultipartFormKeyStrategy, limits: MultipartFormDecoder.Limits, leaf: FormLeaf
    ) throws -> [FormNameStep] {
        let bytes = Array(name.utf8)
        let dots = keyStrategy == .dots
        var position = 0
        while position < bytes.count, bytes[position] != UInt8(ascii: "["),
            !(dots && bytes[position] == UInt8(ascii: "."))
        {
            position += 1
        }
        guard position > 0 else { return [.key(name)] }
        var steps: [FormNameStep] = [.key(String(decoding: bytes[..<position], as: UTF8.self))]
        while position < bytes.count {
            guard steps.count <= limits.maxDepth else {
                throw limitError(
                    "the field name \(String(name.prefix(64)).debugDescription)… nests deeper than \(limits.maxDepth) "
                        + "levels (maxDepth)", leaf: leaf)
            }
            if bytes[position] == UInt8(ascii: "[") {
                guard let close = bytes[(position + 1)...].firstIndex(of: UInt8(ascii: "]")) else {
                    return [.key(name)]
                }
                let inside = bytes[(position + 1)..<close]
                if inside.isEmpty {
                    steps.append(.append)
                } else if let index = Self.index(inside) {
                    guard index < limits.maxListLength else {
                        throw limitError(
                            "the field \(name.debugDescription) has the index \(index), past the \(limits.maxListLength) "
                                + "items a list may hold (maxListLength)", leaf: leaf)
                    }
                    steps.append(.index(index))
                } else {
                    steps.append(.key(String(decoding: inside, as: UTF8.self)))
                }
                position = close + 1
            } else if dots && bytes[position] == UInt8(ascii: ".") {
                var end = position + 1
                while end < bytes.count, bytes[end] != UInt8(ascii: "["), bytes[end] != UInt8(ascii: ".") { end += 1 }
                guard end > position + 1 else { return [.key(name)] }
                steps.append(.key(String(decoding: bytes[(position + 1)..<end], as: UTF8.self)))
                position = end
            } else {
                return [.key(name)]
            }
        }
        guard steps.count <= limits.maxDepth else {
            throw limitError(
                "the field name \(String(name.prefix(64)).debugDescription)… nests deeper than \(limits.maxDepth) "
                    + "levels (maxDepth)", leaf: leaf)
        }
        return steps
    }

    /// The index that `digits` spell, or nil when they are not a canonical index (`007`, `-1`, `1e3`, too long).
    private static func index(_ digits: ArraySlice<UInt8>) -> Int? {
        guard digits.count <= 18, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            digits.count == 1 || digits.first != UInt8(ascii: "0")
        else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    static func limitError(_ message: String, leaf: FormLeaf) -> MultipartError {
        MultipartError(code: .limitExceeded, message: message, partIndex: leaf.partIndex)
    }
}
