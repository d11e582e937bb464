extension MultipartParts.Part {
    /// The files inside this `multipart/mixed` part (``MultipartParser/PartHead/mixedBoundary``), as parts of their
    /// own named as this one; read each file's body before asking for the next, as with the outer parts.
    ///
    /// ```swift
    /// for try await part in parts {
    ///     if part.head.mixedBoundary != nil {
    ///         for try await file in try part.mixedParts() {
    ///             print(file.head.name, file.head.filename ?? "")  // "files", "a.txt"; "files", "b.txt"
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// The limits apply inside as outside: each file by `maxFileBytes`, the files by `maxParts`.
    ///
    /// - Throws: what ``MultipartParser/init(mixedIn:limits:mode:)`` throws.
    public func mixedParts(
        limits: MultipartParser.Limits = .default, mode: MultipartParser.Mode = .strict
    ) throws -> MultipartParts<MultipartParts<Base>.PartBody> {
        MultipartParts<MultipartParts<Base>.PartBody>(
            base: body, parser: try MultipartParser(mixedIn: head, limits: limits, mode: mode), encoding: .identity,
            readsEpilogue: false, timeout: nil)
    }
}
