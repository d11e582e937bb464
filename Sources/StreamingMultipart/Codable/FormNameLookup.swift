/// The form decoder's memory of the field names it has placed: each name's place in the tree, found again in one
/// comparison when the name comes where it came last time, else in one dictionary lookup.
///
/// Forms repeat their names in one order (`rows[][id]`, `rows[][qty]`, …, or `tags` a thousand times), so each
/// name remembers the one that followed it; a name that follows as before is checked byte for byte against that
/// guess and costs no string and no hash. A wrong guess costs one comparison; Swift's seeded hashing keeps a flood
/// of crafted names linear in the lookup. Measured against a lookup alone (Benchmarks/RESULTS.md, "The decoder's
/// name lookups"), the guess halves the cost of a long list of repeated names, and costs nothing that shows when
/// names come shuffled.
///
/// ```swift
/// var lookup = FormNameLookup<Int>()
/// lookup.add("title", 0)
/// lookup.add("body", 1)
/// lookup.find("title")              // 0: looked up
/// lookup.guess(Array("body".utf8).span)  // 1: "body" came after "title" last time
/// ```
struct FormNameLookup<Value> {
    private struct Entry {
        let value: Value
        let utf8: [UInt8]
        /// The entry that came after this one last time, the guess for the name after it.
        var next = -1
    }

    private var entries: [Entry] = []
    private var byName: [String: Int] = [:]
    /// The entry of the name before, whose `next` is the guess for the name now; -1 after a name with no entry.
    private var last = -1

    /// The value of the name spelled by `name`'s bytes when it is the one that followed the name before last time;
    /// nil when it is not (it may still be known: ``find(_:)`` looks it up).
    mutating func guess(_ name: Span<UInt8>) -> Value? {
        guard last >= 0, case let next = entries[last].next, next >= 0, Self.equal(entries[next].utf8, name) else {
            return nil
        }
        last = next
        return entries[next].value
    }

    /// The value of `name`, when it was added.
    mutating func find(_ name: String) -> Value? {
        if last >= 0, case let next = entries[last].next, next >= 0, Self.equal(entries[next].utf8, name) {
            last = next
            return entries[next].value
        }
        guard let found = byName[name] else { return nil }
        follow(with: found)
        return entries[found].value
    }

    /// Remembers `name`'s value, and that it came after the name before.
    mutating func add(_ name: String, _ value: Value) {
        entries.append(Entry(value: value, utf8: Array(name.utf8)))
        byName[name] = entries.count - 1
        follow(with: entries.count - 1)
    }

    /// Forgets the name before: the next name follows one that has no entry (a name that makes a new item each time).
    mutating func interrupt() { last = -1 }

    /// Makes `entry` the guess after the name before, and the name before the next one.
    private mutating func follow(with entry: Int) {
        if last >= 0 { entries[last].next = entry }
        last = entry
    }

    private static func equal(_ utf8: [UInt8], _ name: Span<UInt8>) -> Bool {
        guard utf8.count == name.count else { return false }
        for index in 0..<utf8.count where utf8[index] != name[index] { return false }
        return true
    }

    private static func equal(_ utf8: [UInt8], _ name: String) -> Bool { utf8.elementsEqual(name.utf8) }
}
