/// A form's fields arranged by their names' nesting, for ``MultipartFormDecoder``: `user[name]` under `user`,
/// `tags[]` and a repeated `tags` as list items, `items[0][id]` under item 0.
///
/// Building it is linear in the total length of the names: each name is read twice, left to right (once to check
/// it, once to place it), and stops at ``MultipartFormDecoder/Limits/maxDepth``; every step is a dictionary lookup
/// or an append. A name seen before is one lookup (Swift's seeded hashing keeps a flood of names linear). Values are indexes into the form's lists, so the tree copies no field.
final class FormNode {
    /// The values a name ending here sent, in order: one for a plain field, several for a repeated name or `name[]`.
    let leaves: [FormLeaf]
    /// `name[key]` (or `name.key`) children, and their keys in the order they first came.
    let children: [String: FormNode]
    let childOrder: [String]
    /// `name[]` items that hold more (`name[][key]`), in order.
    let appended: [FormNode]
    /// `name[3]` items, by index.
    let indexed: [Int: FormNode]

    init(
        leaves: [FormLeaf] = [], children: [String: FormNode] = [:], childOrder: [String] = [],
        appended: [FormNode] = [], indexed: [Int: FormNode] = [:]
    ) {
        self.leaves = leaves
        self.children = children
        self.childOrder = childOrder
        self.appended = appended
        self.indexed = indexed
    }

    /// Whether the node holds anything other than values: children or list items.
    var isContainer: Bool { !children.isEmpty || !appended.isEmpty || !indexed.isEmpty }

    /// The node as a list: its values (a repeated name, `name[]`) in order, then its `name[][key]` items, then its
    /// `[i]` items in index order.
    func items() -> [FormValue] {
        var items: [FormValue] = []
        items.reserveCapacity(leaves.count + appended.count + indexed.count)
        for leaf in leaves { items.append(.leaf(leaf)) }
        for node in appended { items.append(.node(node)) }
        for index in indexed.keys.sorted() { items.append(.node(indexed[index]!)) }
        return items
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

    /// Calls `body` with each of the form's fields and files, merged in the order the body sent them: the leaf,
    /// its name and its part's index.
    func forEachLeafInOrder(_ body: (FormLeaf, String, Int) throws -> Void) rethrows {
        var field = 0
        var file = 0
        while field < fields.count || file < files.count {
            if field < fields.count, file == files.count || fields[field].partIndex < files[file].partIndex {
                try body(.field(field), fields[field].name, fields[field].partIndex)
                field += 1
            } else {
                try body(.file(file), files[file].name, files[file].partIndex)
                file += 1
            }
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
    /// The tree of `form`'s fields and files, which come in the form's order.
    ///
    /// - Throws: ``MultipartError/Code/limitExceeded`` when a name nests deeper than `limits.maxDepth`, or a list
    ///   would hold more than `limits.maxListLength` items or an index of `limits.maxListLength` or more.
    static func tree(
        of form: SpooledForm, keyStrategy: MultipartFormKeyStrategy, limits: MultipartFormDecoder.Limits
    ) throws -> FormNode {
        var draft = FormTreeDraft(limits: limits)
        // Where each name led, for the names that lead to the same node every time (all but those with a `[]`
        // before their end, which makes a new item): a repeated name is one lookup, not a walk.
        var placed: [String: (node: Int, appendsValue: Bool)] = [:]
        try form.forEachLeafInOrder { leaf, name, partIndex in
            var node = 0
            var appendsValue = false
            if let known = placed[name] {
                (node, appendsValue) = known
            } else {
                var makesItem = false
                try FormNameStep.walk(name, keyStrategy: keyStrategy, limits: limits, partIndex: partIndex) {
                    step, isLast in
                    switch step {
                    case .key(let key):
                        node = draft.child(key, of: node)
                    case .index(let index):
                        node = try draft.item(index, of: node, name: name, partIndex: partIndex)
                    case .append where isLast:
                        // A last `[]` adds the value to the list itself, as a repeated name does: no node for one
                        // value.
                        appendsValue = true
                    case .append:
                        node = try draft.appendedItem(of: node, name: name, partIndex: partIndex)
                        makesItem = true
                    }
                }
                if !makesItem { placed[name] = (node, appendsValue) }
            }
            try draft.add(leaf, to: node, checkingRoom: appendsValue, name: name, partIndex: partIndex)
        }
        return draft.node(0)
    }
}

/// A ``FormNode`` tree as it is built: nodes in one array, children by their index in it, so that building makes
/// no object until the end and mutates nothing shared (no exclusivity check on each step).
private struct FormTreeDraft {
    struct Node {
        var leaves: [FormLeaf] = []
        var children: [String: Int] = [:]
        var childOrder: [String] = []
        var appended: [Int] = []
        var indexed: [Int: Int] = [:]

        var itemCount: Int { leaves.count + appended.count + indexed.count }
    }

    let limits: MultipartFormDecoder.Limits
    /// The root first.
    var nodes = [Node()]

    init(limits: MultipartFormDecoder.Limits) { self.limits = limits }

    mutating func child(_ key: String, of parent: Int) -> Int {
        if let node = nodes[parent].children[key] { return node }
        nodes.append(Node())
        nodes[parent].children[key] = nodes.count - 1
        nodes[parent].childOrder.append(key)
        return nodes.count - 1
    }

    mutating func item(_ index: Int, of parent: Int, name: String, partIndex: Int) throws -> Int {
        if let node = nodes[parent].indexed[index] { return node }
        try checkRoom(in: parent, for: name, partIndex: partIndex)
        nodes.append(Node())
        nodes[parent].indexed[index] = nodes.count - 1
        return nodes.count - 1
    }

    mutating func appendedItem(of parent: Int, name: String, partIndex: Int) throws -> Int {
        try checkRoom(in: parent, for: name, partIndex: partIndex)
        nodes.append(Node())
        nodes[parent].appended.append(nodes.count - 1)
        return nodes.count - 1
    }

    /// Adds a value; a list's room is checked for a second value, or for any value `name[]` adds.
    mutating func add(_ leaf: FormLeaf, to node: Int, checkingRoom: Bool, name: String, partIndex: Int) throws {
        if checkingRoom || !nodes[node].leaves.isEmpty { try checkRoom(in: node, for: name, partIndex: partIndex) }
        nodes[node].leaves.append(leaf)
    }

    private func checkRoom(in node: Int, for name: String, partIndex: Int) throws {
        guard nodes[node].itemCount < limits.maxListLength else {
            throw FormNameStep.limitError(
                "the field \(name.debugDescription) makes a list of more than \(limits.maxListLength) items "
                    + "(maxListLength)", partIndex: partIndex)
        }
    }

    /// The finished node at `index`, its descendants made first.
    func node(_ index: Int) -> FormNode {
        let draft = nodes[index]
        var children: [String: FormNode] = [:]
        children.reserveCapacity(draft.children.count)
        for (key, child) in draft.children { children[key] = node(child) }
        return FormNode(
            leaves: draft.leaves, children: children, childOrder: draft.childOrder, appended: draft.appended.map(node),
            indexed: draft.indexed.mapValues(node))
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
