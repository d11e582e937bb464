extension MultipartParser {
    /// What the parser found, in body order: for each part `partHeaders`, any number of `bodyBytes`, `partEnd`;
    /// then `end` once, at the close delimiter.
    public enum Event: Sendable, Hashable {
        /// A part begins: its headers and parsed `Content-Disposition`.
        case partHeaders(MultipartParser.PartHead)
        /// Bytes of the current part's body: a slice of the appended input wherever possible (no copy).
        case bodyBytes(ArraySlice<UInt8>)
        /// The current part's body is complete.
        case partEnd
        /// The close delimiter: the body is complete. Anything after it (the epilogue) is skipped.
        case end
    }
}
