import Foundation

/// A value behind a lock: the one way the core, and the products that do not import NIO, guard state that tasks
/// share. Where NIO is imported, its `NIOLockedValueBox` does this job; `Synchronization.Mutex` would, but needs
/// macOS 15 and iOS 18, past the package's platforms. State that changes together lives in one value here (a
/// struct, or an enum whose cases carry their data), never in loose fields beside a lock.
///
/// ```swift
/// let used = LockedValue(0)
/// used.withLock { $0 += 512 }
/// let now = used.withLock { $0 }
/// ```
///
/// Keep the closures short and free of waits: resume a continuation, or call out, after `withLock` returns.
package final class LockedValue<Value> {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, under the lock.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// Sendable as NIO's box is: when its value is. A class that keeps a value that is not (a file, a stream) says why
/// sharing it is safe where it declares itself `@unchecked Sendable`.
extension LockedValue: @unchecked Sendable where Value: Sendable {}
