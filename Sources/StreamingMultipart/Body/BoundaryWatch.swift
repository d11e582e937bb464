/// Looks for `--boundary` in a file or stream part's bytes as they are read, for a body whose boundary the caller
/// chose: such a part could otherwise carry a delimiter and a header block of its own, and the receiver would read
/// an extra part (a field smuggled in by whoever wrote the file).
///
/// Every occurrence counts, wherever it is on its line, as ``MultipartBody/append(_:)`` checks in-memory parts. The
/// scan is the parser's (`BoundaryScanner`, a vectorized pass over each read), plus a look at the junction with
/// the previous read, whose last `dashBoundary.count - 1` bytes are kept. A body with a random boundary (the
/// default) is not scanned: 190 random bits are not found in a file by chance.
struct BoundaryWatch {
    private let scanner: BoundaryScanner
    /// The part's last bytes so far, at most `dashBoundary.count - 1`: where an occurrence across two reads begins.
    private var tail: [UInt8] = []
    /// The part's bytes checked so far.
    private(set) var checked: Int64 = 0

    /// - Parameter checked: the part offset of the first byte it will be given (a reader that starts inside the part).
    init(boundary: MultipartBoundary, checked: Int64 = 0) {
        scanner = BoundaryScanner(dashBoundary: boundary.dashBoundary)
        tail.reserveCapacity(scanner.dashBoundary.count * 2)
        self.checked = checked
    }

    /// How many bytes before a starting point an occurrence that ends after it can begin.
    static func lookBehind(_ boundary: MultipartBoundary) -> Int { boundary.dashBoundary.count - 1 }

    /// Checks the part's next bytes; returns the part offset at which `--boundary` begins, or nil.
    mutating func check(_ bytes: RawSpan) -> Int64? {
        let keep = scanner.dashBoundary.count - 1
        if !tail.isEmpty {
            // The junction: the kept bytes and the first bytes of this read.
            let junctionStart = tail.count
            tail.append(copying: bytes.extracting(first: keep))
            let found = tail.withSpan { scanner.firstMatch(in: $0, from: 0) }
            if let found, found < junctionStart { return checked - Int64(junctionStart - found) }
            tail.removeLast(tail.count - junctionStart)
        }
        if let found = scanner.firstMatch(in: bytes, from: 0) { return checked + Int64(found) }
        checked += Int64(bytes.byteCount)
        if bytes.byteCount >= keep {
            tail.removeAll(keepingCapacity: true)
            tail.append(copying: bytes.extracting(last: keep))
        } else {
            tail.append(copying: bytes)
            if tail.count > keep { tail.removeFirst(tail.count - keep) }
        }
        return nil
    }
}
