/// A form's fields arranged by their names' nesting, for ``MultipartFormDecoder``: `user[name]` under `user`,
/// `tags[]` and a repeated `tags` as list items, `items[0][id]` under item 0.
///
/// Each node owns the values sent under its name (``FormLeaves``), so that a list of text fields is handed to a
/// `[String]` whole, with no copy of its strings. ``FormTreeBuilder`` makes the tree one value at a time, in the
/// order the form sent them.
final class FormNode {
    /// The values a name ending here sent, in order: one for a plain field, several for a repeated name or `name[]`.
    let leaves: FormLeaves
    /// `name[key]` (or `name.key`) children, and their keys in the order they first came.
    let children: [String: FormNode]
    let childOrder: [String]
    /// `name[]` items that hold more (`name[][key]`), in order.
    let appended: [FormNode]
    /// `name[3]` items, by index.
    let indexed: [Int: FormNode]

    init(
        leaves: FormLeaves = FormLeaves(), children: [String: FormNode] = [:], childOrder: [String] = [],
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
        for position in 0..<leaves.count { items.append(.leaf(self, position)) }
        for node in appended { items.append(.node(node)) }
        for index in indexed.keys.sorted() { items.append(.node(indexed[index]!)) }
        return items
    }
}

/// What a name reaches in the tree: a node, or one value of a node's list (no node of its own, so that a list of a
/// hundred thousand values is a hundred thousand positions).
enum FormValue {
    case node(FormNode)
    /// Value `position` of the node's ``FormNode/leaves``.
    case leaf(FormNode, Int)
}

/// The values sent under one node's name, in the order they came: text fields and files. Parallel arrays, so that
/// the texts of a list of text fields are one `[String]`.
struct FormLeaves {
    /// Each value's text: a text field's value decoded per its charset; empty for a file.
    private(set) var texts: [String] = []
    /// The files among the values, by position.
    private(set) var files: [Int: SpooledFile] = [:]
    /// The bytes of the text values whose bytes are not their text's UTF-8 (another charset, bytes that are not
    /// UTF-8), by position.
    private(set) var bytesAsSent: [Int: [UInt8]] = [:]
    /// The name the first value was sent with, and the positions of those sent with another spelling (`tags` and
    /// `tags[]` both add to `tags`): for errors, which quote the name as sent.
    private var firstName = ""
    private var otherNames: [Int: String] = [:]

    var count: Int { texts.count }
    var isEmpty: Bool { texts.isEmpty }

    /// The name the value at `position` was sent with.
    func name(at position: Int) -> String { otherNames[position] ?? firstName }

    mutating func append(text: consuming String, bytesAsSent bytes: [UInt8]?, name: String) {
        if let bytes { bytesAsSent[texts.count] = bytes }
        add(name)
        texts.append(text)
    }

    mutating func append(file: SpooledFile, name: String) {
        files[texts.count] = file
        add(name)
        texts.append("")
    }

    /// The bytes the text value at `position` was sent as.
    func bytes(at position: Int) -> [UInt8] { bytesAsSent[position] ?? Array(texts[position].utf8) }

    /// Gives the text value at `position` its text read in another charset.
    mutating func replaceText(at position: Int, with text: String, bytesAsSent bytes: [UInt8]?) {
        texts[position] = text
        bytesAsSent[position] = bytes
    }

    private mutating func add(_ name: String) {
        if texts.isEmpty {
            firstName = name
        } else if name != firstName {
            otherNames[texts.count] = name
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
    /// - Throws: what ``FormTreeBuilder/place(_:partIndex:)`` and its `add` throw.
    static func tree(
        of form: SpooledForm, keyStrategy: MultipartFormKeyStrategy, limits: MultipartFormDecoder.Limits
    ) throws -> FormNode {
        var builder = FormTreeBuilder(keyStrategy: keyStrategy, limits: limits)
        var field = 0
        var file = 0
        while field < form.fields.count || file < form.files.count {
            if field < form.fields.count,
                file == form.files.count || form.fields[field].partIndex < form.files[file].partIndex
            {
                let value = form.fields[field]
                let place = try builder.place(value.name, partIndex: value.partIndex)
                try builder.add(
                    text: value.value, bytesAsSent: value.bytesAsSent, at: place, partIndex: value.partIndex)
                field += 1
            } else {
                let value = form.files[file]
                let place = try builder.place(value.name, partIndex: value.partIndex)
                try builder.add(file: value, at: place, partIndex: value.partIndex)
                file += 1
            }
        }
        return builder.tree()
    }
}

/// Builds a ``FormNode`` tree one value at a time: nodes in one array, children by their index in it, so that
/// building makes no object until ``tree()`` and mutates nothing shared (no exclusivity check on each step).
///
/// Linear in the total length of the names: a new name is read twice, left to right (once to check it, once to
/// place it), and stops at ``MultipartFormDecoder/Limits/maxDepth``; every step is a dictionary lookup or an append.
/// A name placed before is found again by ``FormNameLookup``, from the parser's bytes when they are the name.
struct FormTreeBuilder {
    private struct Node {
        var leaves = FormLeaves()
        var children: [String: Int] = [:]
        var childOrder: [String] = []
        var appended: [Int] = []
        var indexed: [Int: Int] = [:]

        var itemCount: Int { leaves.count + appended.count + indexed.count }
    }

    /// Where a name's value goes: its node, whether it adds to the node's list (a last `[]`) and the name as sent.
    struct Place {
        fileprivate let node: Int
        fileprivate let appendsValue: Bool
        let name: String
    }

    let keyStrategy: MultipartFormKeyStrategy
    let limits: MultipartFormDecoder.Limits
    /// The root first.
    private var nodes = [Node()]
    /// The places of the names that lead to the same node every time (all but those with a `[]` before their end,
    /// which makes a new item).
    private var names = FormNameLookup<Place>()
    /// What the tree's structure holds so far, by `MultipartFormDecoder.nameOverhead`'s count: each node and each
    /// name placed, with their bytes. A budget counts it beside the values (a flood of new or nested names builds
    /// nodes without values).
    private(set) var structureBytes = 0

    init(keyStrategy: MultipartFormKeyStrategy, limits: MultipartFormDecoder.Limits) {
        self.keyStrategy = keyStrategy
        self.limits = limits
    }

    /// Where the value of a field named by the parser's bytes goes (a name as received, no escapes): a name that
    /// came after the one before last time too is one comparison of bytes, with no string made.
    ///
    /// - Throws: what ``place(_:partIndex:)`` throws.
    mutating func place(plain name: Span<UInt8>, partIndex: Int) throws -> Place {
        if let guessed = names.guess(name) { return guessed }
        return try place(String(decodingUTF8: name), partIndex: partIndex)
    }

    /// Where the value of a field named `name` goes.
    ///
    /// - Throws: ``MultipartError/Code/limitExceeded`` when the name nests deeper than `limits.maxDepth` or makes
    ///   a list of more than `limits.maxListLength` items, or holds an index of `limits.maxListLength` or more.
    mutating func place(_ name: String, partIndex: Int) throws -> Place {
        if let known = names.find(name) { return known }
        var node = 0
        var appendsValue = false
        var makesItem = false
        try FormNameStep.walk(name, keyStrategy: keyStrategy, limits: limits, partIndex: partIndex) { step, isLast in
            switch step {
            case .key(let key):
                node = child(key, of: node)
            case .index(let index):
                node = try item(index, of: node, name: name, partIndex: partIndex)
            case .append where isLast:
                // A last `[]` adds the value to the list itself, as a repeated name does: no node for one value.
                appendsValue = true
            case .append:
                node = try appendedItem(of: node, name: name, partIndex: partIndex)
                makesItem = true
            }
        }
        let place = Place(node: node, appendsValue: appendsValue, name: name)
        if makesItem {
            names.interrupt()
        } else {
            names.add(name, place)
            structureBytes += MultipartFormDecoder.nameOverhead + 2 * name.utf8.count
        }
        return place
    }

    /// Adds a text value at `place`.
    ///
    /// - Throws: ``MultipartError/Code/limitExceeded`` when the list there is full.
    /// - Returns: where the value is, to read it again in another charset.
    @discardableResult
    mutating func add(text: consuming String, bytesAsSent: [UInt8]?, at place: Place, partIndex: Int) throws
        -> TextAddress
    {
        try checkRoom(for: place, partIndex: partIndex)
        let address = TextAddress(node: place.node, position: nodes[place.node].leaves.count)
        nodes[place.node].leaves.append(text: text, bytesAsSent: bytesAsSent, name: place.name)
        return address
    }

    /// Where a text value is in the tree being built.
    struct TextAddress {
        fileprivate let node: Int
        fileprivate let position: Int
    }

    /// The bytes the text value at `address` was sent as.
    func bytes(at address: TextAddress) -> [UInt8] { nodes[address.node].leaves.bytes(at: address.position) }

    /// The name the text value at `address` was sent with.
    func name(at address: TextAddress) -> String { nodes[address.node].leaves.name(at: address.position) }

    /// Gives the text value at `address` its text read in another charset.
    mutating func replaceText(at address: TextAddress, with text: String, bytesAsSent: [UInt8]?) {
        nodes[address.node].leaves.replaceText(at: address.position, with: text, bytesAsSent: bytesAsSent)
    }

    /// Adds a file at `place`.
    ///
    /// - Throws: ``MultipartError/Code/limitExceeded`` when the list there is full.
    mutating func add(file: SpooledFile, at place: Place, partIndex: Int) throws {
        try checkRoom(for: place, partIndex: partIndex)
        nodes[place.node].leaves.append(file: file, name: place.name)
    }

    /// The tree built, from its root.
    func tree() -> FormNode { node(0) }

    private mutating func child(_ key: String, of parent: Int) -> Int {
        if let node = nodes[parent].children[key] { return node }
        structureBytes += MultipartFormDecoder.nameOverhead + 2 * key.utf8.count
        nodes.append(Node())
        nodes[parent].children[key] = nodes.count - 1
        nodes[parent].childOrder.append(key)
        return nodes.count - 1
    }

    private mutating func item(_ index: Int, of parent: Int, name: String, partIndex: Int) throws -> Int {
        if let node = nodes[parent].indexed[index] { return node }
        try checkRoom(in: parent, for: name, partIndex: partIndex)
        structureBytes += MultipartFormDecoder.nameOverhead
        nodes.append(Node())
        nodes[parent].indexed[index] = nodes.count - 1
        return nodes.count - 1
    }

    private mutating func appendedItem(of parent: Int, name: String, partIndex: Int) throws -> Int {
        try checkRoom(in: parent, for: name, partIndex: partIndex)
        structureBytes += MultipartFormDecoder.nameOverhead
        nodes.append(Node())
        nodes[parent].appended.append(nodes.count - 1)
        return nodes.count - 1
    }

    /// A list's room is checked for a second value, or for any value `name[]` adds.
    private func checkRoom(for place: Place, partIndex: Int) throws {
        if place.appendsValue || !nodes[place.node].leaves.isEmpty {
            try checkRoom(in: place.node, for: place.name, partIndex: partIndex)
        }
    }

    private func checkRoom(in node: Int, for name: String, partIndex: Int) throws {
        guard nodes[node].itemCount < limits.maxListLength else {
            throw FormNameStep.limitError(
                "the field \(name.debugDescription) makes a list of more than \(limits.maxListLength) items "
                    + "(maxListLength)", limit: "maxListLength", partIndex: partIndex)
        }
    }

    /// The finished node at `index`, its descendants made first.
    private func node(_ index: Int) -> FormNode {
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
        let reader = FormNameReader(dots: keyStrategy == .dots, limits: limits, name: name, partIndex: partIndex)
        try name.withUTF8Span { bytes in
            guard let count = try reader.read(bytes, visit: nil, count: 0) else { return try visit(.key(name), true) }
            _ = try withoutActuallyEscaping(visit) { try reader.read(bytes, visit: $0, count: count) }
        }
    }

    static func limitError(_ message: String, limit: String, partIndex: Int) -> MultipartError {
        MultipartError(code: .limitExceeded, message: message, partIndex: partIndex, limit: limit)
    }
}
