/// Runs `operation` and returns its result, unless `wait` returns first: the operation is then cancelled and
/// `timedOut` thrown. One bound for a whole exchange (a request, its answer's head and its body), where a
/// transport's own timeout covers only part of it. `wait` is a sleep in production and a test's own signal in a
/// test; it must end when cancelled (`Task.sleep` does), since the operation's end cancels it.
///
/// ```swift
/// let text = try await withDeadline(
///     waiting: { try await Task.sleep(for: .seconds(5)) }, timedOut: TimeoutError(), operation: { try await fetch() })
/// ```
package func withDeadline<Result: Sendable>(
    waiting wait: @escaping @Sendable () async throws -> Void, timedOut: any Error,
    operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Result.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await wait()
            try Task.checkCancellation()
            throw timedOut
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

/// ``withDeadline(waiting:timedOut:operation:)`` after `limit` on the continuous clock.
package func withDeadline<Result: Sendable>(
    _ limit: Duration, timedOut: any Error, _ operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withDeadline(waiting: { try await Task.sleep(for: limit) }, timedOut: timedOut, operation: operation)
}
