/// A form's fields arranged by their names' nesting, for ``MultipartFormDecoder``: `user[name]` under `user`,
/// `tags[]` and a repeated `tags` as list items, `items[0][id]` under item 0.
///
/// Building it is linear in the total length of the names: each name is read twice, left to right (once to check
/// it, once to place it), and stops at ``MultipartFormDecoder/Limits/maxDepth``; every step is a dictionary lookup
/// or an append. A name seen before is one lookup (Swift's seeded hashing keeps a flood of names linear). Values are indexes into the form's lists, so the tree copies no field.
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
    func items() -> [FormValue] {
        var items: [FormValue] = []
        items.reserveCapacity(itemCount)
        for leaf in leaves { items.append(.leaf(leaf)) }
        for node in appended { items.append(.node(node)) }
        for index in indexed.keys.sorted() { items.append(.node(indexed[index]!)) }
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

/// What a name reaches in the tree: a node, or one value of a list (no node of its own, so that a list of a
/// hundred thousand values is a hundred thousand indexes).
enum FormValue {
    case node(FormNode)
    case leaf(FormLeaf)
}

/// One value of a form: the index of a text field in ``SpooledForm/fields`` or of a file in ``SpooledForm/files``.
enum FormLeaf: Hashable {
    case field(Int)
    case file(Int)
}

extension SpooledForm {
    /// The field name `leaf` was sent with.
    func name(of leaf: FormLeaf) -> String {
        switch leaf {
        case .field(let index): fields[index].name
        case .file(let index): files[index].name
        }
    }

    func partIndex(of leaf: FormLeaf) -> Int {
        switch leaf {
        case .field(let index): fields[index].partIndex
        case .file(let index): files[index].partIndex
        }
    }

    /// The form's fields and files merged in the order the body sent them.
    var leavesInOrder: [FormLeaf] {
        var leaves: [FormLeaf] = []
        leaves.reserveCapacity(fields.count + files.count)
        var field = 0
        var file = 0
        while field < fields.count || file < files.count {
            if field < fields.count, file == files.count || fields[field].partIndex < files[file].partIndex {
                leaves.append(.field(field))
                field += 1
            } else {
                leaves.append(.file(file))
                file += 1
            }
        }
        return leaves
    }
}

/// A step of a field name: what `[key]`, `.key`, `[3]` and `[]` say.
enum FormNameStep: Equatable {
    case key(String)
    case index(Int)
    case append
}

extension FormNode {
    /// The tree of `form`'s fields and files, which come in the form's order.
    ///
    /// - Throws: ``MultipartError/Code/limitExceeded`` when a name nests deeper than `limits.maxDepth`, or a list
    ///   would hold more than `limits.maxListLength` items or an index of `limits.maxListLength` or more.
    static func tree(
        of form: SpooledForm, keyStrategy: MultipartFormKeyStrategy, limits: MultipartFormDecoder.Limits
    ) throws -> FormNode {
        let root = FormNode()
        // Where each name led, for the names that lead to the same node every time (all but those with a `[]`
        // before their end, which makes a new item): a repeated name is one lookup, not a walk.
        var placed: [String: (node: FormNode, appendsValue: Bool)] = [:]
        for leaf in form.leavesInOrder {
            let name = form.name(of: leaf)
            let partIndex = form.partIndex(of: leaf)
            var node = root
            var appendsValue = false
            if let known = placed[name] {
                (node, appendsValue) = known
            } else {
                var makesItem = false
                try FormNameStep.walk(name, keyStrategy: keyStrategy, limits: limits, partIndex: partIndex) {
                    step, isLast in
                    switch step {
                    case .key(let key):
                        node = node.child(key)
                    case .index(let index):
                        if let item = node.indexed[index] {
                            node = item
                        } else {
                            try node.checkRoom(for: name, limits: limits, partIndex: partIndex)
                            let item = FormNode()
                            node.indexed[index] = item
                            node = item
                        }
                    case .append where isLast:
                        // A last `[]` adds the value to the list itself, as a repeated name does: no node for one
                        // value.
                        appendsValue = true
                    case .append:
                        try node.checkRoom(for: name, limits: limits, partIndex: partIndex)
                        let item = FormNode()
                        node.appended.append(item)
                        node = item
                        makesItem = true
                    }
                }
                if !makesItem { placed[name] = (node, appendsValue) }
            }
            if !node.leaves.isEmpty || appendsValue {
                try node.checkRoom(for: name, limits: limits, partIndex: partIndex)
            }
            node.leaves.append(leaf)
        }
        return root
    }

    private func checkRoom(for name: String, limits: MultipartFormDecoder.Limits, partIndex: Int) throws {
        guard itemCount < limits.maxListLength else {
            throw FormNameStep.limitError(
                "the field \(name.debugDescription) makes a list of more than \(limits.maxListLength) items "
                    + "(maxListLength)", partIndex: partIndex)
        }
    }
}

extension FormNameStep {
    /// Hands each step of `name` to `visit`, with whether it is the last: `user[name]` → `user`, `name`;
    /// `tags[]` → `tags`, append; `items[0].id` (dots) → `items`, 0, `id`. A name that does not follow the
    /// strategy's grammar (`a[b`, `a[b]c`, `[x]`) is one key, the whole name, as sent.
    ///
    /// An index is `0` or digits without a leading zero, at most `maxListLength - 1`; other bracketed text is a key.
    /// The name is read in place, twice: once to check it whole, so that no step is visited for a name that turns
    /// out to be one key or to pass the limits, and once to visit.
    ///
    /// - Throws: ``MultipartError/Code/limitExceeded`` (at `partIndex`) for more than `limits.maxDepth` steps or
    ///   an index past `limits.maxListLength`, before any step is visited.
    static func walk(
        _ name: String, keyStrategy: MultipartFormKeyStrategy, limits: MultipartFormDecoder.Limits, partIndex: Int,
        visit: (FormNameStep, _ isLast: Bool) throws -> Void
    ) throws {
        var utf8 = name
        try utf8.withUTF8 { bytes in
            let reader = FormNameReader(
                bytes: bytes, dots: keyStrategy == .dots, limits: limits, name: name, partIndex: partIndex)
            guard let count = try reader.read(visit: nil, count: 0) else { return try visit(.key(name), true) }
            _ = try withoutActuallyEscaping(visit) { try reader.read(visit: $0, count: count) }
        }
    }

    static func limitError(_ message: String, partIndex: Int) -> MultipartError {
        MultipartError(code: .limitExceeded, message: message, partIndex: partIndex)
    }
}
