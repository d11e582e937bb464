extension AsyncIteratorProtocol {
    /// The next element, on `actor` where the system has `next(isolation:)` (macOS 15, iOS 18 and later, Linux),
    /// else through `next()` as the standard library's own default does: the iterator is used by one task at a
    /// time (the caller), so handing it to the nonisolated `next()` shares it with nothing.
    mutating func nextChunk(isolation actor: isolated (any Actor)?) async throws -> Element? {
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) {
            return try await next(isolation: actor)
        }
        nonisolated(unsafe) var unsafeIterator = self
        defer { self = unsafeIterator }
        return try await unsafeIterator.next()
    }
}
