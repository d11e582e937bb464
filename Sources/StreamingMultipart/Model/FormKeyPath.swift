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
                name += strategy == .dots ? ".\(key)" : "[\(key)]"
            case .index where strategy == .emptyBrackets:
                name += "[]"
            case .index where position == components.count - 1:
                name += strategy == .dots ? "" : "[]"
            case .index(let index):
                name += "[\(index)]"
            }
        }
        return name
    }

    /// Why a key on the path, from step `first` on, cannot be named under `strategy`, or nil when every one can: an
    /// empty key would read as a list item (`name[]`) or as no name, and a reserved character as nesting. The one
    /// rule the encoder and ``MultipartBody/append(parameters:keyStrategy:)`` refuse keys by.
    func invalidKey(under strategy: MultipartFormKeyStrategy, from first: Int = 0) -> String? {
        let reserved = strategy.reserved
        for case .key(let key) in components.dropFirst(first)
        where key.isEmpty || key.contains(where: reserved.contains) {
            return key.isEmpty
                ? "an empty key would read as a list item (`name[]`) or as no name"
                : "the key \(key.debugDescription) holds a character that the \(strategy) key strategy reads as "
                    + "nesting (\(reserved.sorted().map(String.init).joined(separator: " ")))"
        }
        return nil
    }
}
