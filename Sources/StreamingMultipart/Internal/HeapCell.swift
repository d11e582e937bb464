/// One value on the heap, owned by whoever holds the cell (it cannot be copied) and freed with it, reached through
/// ``value`` without the run-time exclusivity check a class's stored `var` costs at every access.
///
/// ```swift
/// final class Driver {
///     private let cursor = HeapCell(PartsCursor(parser: parser))
///     func step() { cursor.value.advance() }   // no swift_beginAccess
/// }
/// ```
///
/// The compiler still checks each function's accesses statically; what it cannot check is two overlapping accesses
/// from different calls, so an owner keeps the cell private and uses it from one task at a time (as an async
/// iterator is used).
struct HeapCell<Value: ~Copyable>: ~Copyable {
    private let pointer: UnsafeMutablePointer<Value>

    init(_ value: consuming Value) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: value)
    }

    deinit {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }

    /// The value, read and modified in place.
    var value: Value {
        _read { yield pointer.pointee }
        nonmutating _modify { yield &pointer.pointee }
    }
}
