import Foundation

/// The few byte operations the standard library's spans do not offer yet (bulk copies, UTF-8 decoding, a span over
/// a caller's raw buffer), so that code outside `Internal/` reads and writes bytes through `Span`, `RawSpan` and
/// `OutputRawSpan` alone. Every pointer here lives inside the closure that lends it.
// On Apple platforms `Array.span`, `String.UTF8View.span` and Foundation's `Data.span` need the 2025 systems, while
// `ArraySlice.span`, `Span`, `RawSpan` and the output spans are back-deployed: code outside `Internal/` takes an
// array's, a string's or a `Data`'s span through `withSpan` and `withUTF8Span` below (or an `ArraySlice`'s `span`).

extension String {
    /// Calls `body` with the string's UTF-8 bytes.
    func withUTF8Span<Result>(_ body: (Span<UInt8>) throws -> Result) rethrows -> Result {
        var text = self
        return try text.withUTF8 { try body($0.span) }
    }

    /// `bytes` decoded as UTF-8, ill-formed sequences replaced as `String(decoding:as:)` does.
    ///
    /// ```swift
    /// let name = String(decodingUTF8: line.extracting(0..<colon))
    /// ```
    init(decodingUTF8 bytes: Span<UInt8>) {
        self = bytes.withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
    }
}

extension String {
    /// Whether the string's UTF-8 is `bytes`, byte for byte.
    func utf8Equals(_ bytes: [UInt8]) -> Bool { utf8Equals(bytes[...]) }

    /// Whether the string's UTF-8 is `bytes`, byte for byte.
    func utf8Equals(_ bytes: ArraySlice<UInt8>) -> Bool { utf8Equals(bytes.span) }

    /// Whether the string's UTF-8 is `bytes`, byte for byte.
    func utf8Equals(_ bytes: Span<UInt8>) -> Bool {
        guard utf8.count == bytes.count else { return false }
        // A native string lends its bytes in place; a small or bridged one is copied first.
        let equal = utf8.withContiguousStorageIfAvailable { utf8 in
            bytes.withUnsafeBufferPointer { bytes in
                bytes.isEmpty || memcmp(utf8.baseAddress!, bytes.baseAddress!, bytes.count) == 0
            }
        }
        if let equal { return equal }
        var text = self
        return text.withUTF8 { utf8 in
            bytes.withUnsafeBufferPointer { bytes in
                bytes.isEmpty || memcmp(utf8.baseAddress!, bytes.baseAddress!, bytes.count) == 0
            }
        }
    }
}

extension Data {
    /// Calls `body` with the data's bytes.
    func withSpan<Result>(_ body: (Span<UInt8>) throws -> Result) rethrows -> Result {
        try withUnsafeBytes { try body($0.assumingMemoryBound(to: UInt8.self).span) }
    }
}

extension OutputRawSpan {
    /// Appends a copy of `bytes`, which must fit in ``freeCapacity``.
    ///
    /// ```swift
    /// let count = min(head.count - sent, output.freeCapacity)
    /// output.append(copying: head[sent..<(sent + count)].span)
    /// ```
    mutating func append(copying bytes: Span<UInt8>) {
        bytes.withUnsafeBytes { append(copying: $0.bytes) }
    }

    /// Appends a copy of `bytes`, which must fit in ``freeCapacity``.
    mutating func append(copying bytes: RawSpan) {
        bytes.withUnsafeBytes { source in
            withUnsafeMutableBytes { appendCopy(of: source, to: $0, initialized: &$1) }
        }
    }

    /// Lets `body` write into the free capacity of this span, or its first `limit` bytes, as an
    /// `UnsafeMutableRawBufferPointer` (for a system call or C library that fills memory); `body` returns how many
    /// bytes it wrote, at most the buffer's size.
    mutating func appendWritten(
        atMost limit: Int = .max, by body: (UnsafeMutableRawBufferPointer) throws -> Int
    ) rethrows -> Int {
        try withPrefix(limit) { output in
            try output.withUnsafeMutableBytes { free, initialized in
                let count = try body(free)
                precondition(count >= 0 && count <= free.count, "a writer reported more bytes than it had room for")
                initialized = count
                return count
            }
        }
    }

    /// Calls `body` with an output span over at most the next `limit` bytes of this span's free capacity, and
    /// counts what it wrote as appended here.
    mutating func withPrefix<Result>(
        _ limit: Int, _ body: (inout OutputRawSpan) throws -> Result
    ) rethrows -> Result {
        try withUnsafeMutableBytes { buffer, initialized in
            let end = initialized + min(limit, buffer.count - initialized)
            let free = UnsafeMutableRawBufferPointer(rebasing: buffer[initialized..<end])
            var output = OutputRawSpan(buffer: free, initializedCount: 0)
            let result = try body(&output)
            initialized += output.finalize(for: free)
            return result
        }
    }

    /// Calls `body` with an output span over the caller's raw buffer `buffer`, and returns the bytes it wrote: how
    /// a public `read(into: UnsafeMutableRawBufferPointer)` forwards to its span form.
    static func filling(
        _ buffer: UnsafeMutableRawBufferPointer, _ body: (inout OutputRawSpan) throws -> Void
    ) rethrows -> Int {
        var output = OutputRawSpan(buffer: buffer, initializedCount: 0)
        try body(&output)
        return output.finalize(for: buffer)
    }

    /// ``filling(_:_:)`` over the `count` bytes at `start`, as `InputStream.read(_:maxLength:)` hands them.
    static func filling(
        _ start: UnsafeMutablePointer<UInt8>, count: Int, _ body: (inout OutputRawSpan) throws -> Void
    ) rethrows -> Int {
        try filling(UnsafeMutableRawBufferPointer(start: start, count: count), body)
    }
}

extension OutputSpan where Element == UInt8 {
    /// Appends a copy of `bytes`, which must fit in ``freeCapacity``. One `memcpy`, inlined: a part's head is
    /// made of a few short copies.
    @inline(__always)
    mutating func append(copying bytes: Span<UInt8>) {
        bytes.withUnsafeBytes { source in
            withUnsafeMutableBufferPointer {
                appendCopy(of: source, to: UnsafeMutableRawBufferPointer($0), initialized: &$1)
            }
        }
    }

    /// Calls `body` with a raw view of this span's free capacity, and counts the bytes it wrote as initialized.
    mutating func withRawOutput<Result>(_ body: (inout OutputRawSpan) throws -> Result) rethrows -> Result {
        try withUnsafeMutableBufferPointer { buffer, initialized in
            let free = UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[initialized...]))
            var output = OutputRawSpan(buffer: free, initializedCount: 0)
            let result = try body(&output)
            initialized += output.finalize(for: free)
            return result
        }
    }
}

extension Array where Element == UInt8 {
    /// Calls `body` with the array's bytes.
    func withSpan<Result>(_ body: (Span<UInt8>) throws -> Result) rethrows -> Result {
        let whole = self[...]
        return try body(whole.span)
    }

    /// Appends a copy of `bytes`.
    mutating func append(copying bytes: RawSpan) {
        append(capacity: bytes.byteCount) { $0.append(copying: bytes) }
    }

    /// Appends the bytes `body` writes into `capacity` bytes of new room; returns what `body` returns.
    ///
    /// ```swift
    /// var chunk: [UInt8] = []
    /// let count = try chunk.append(capacity: 64 * 1024) { try reader.read(into: &$0) }
    /// ```
    mutating func append<Result>(
        capacity: Int, _ body: (inout OutputRawSpan) throws -> Result
    ) rethrows -> Result {
        var result: Result?
        try append(addingCapacity: capacity) { (output: inout OutputSpan<UInt8>) in
            result = try output.withRawOutput(body)
        }
        return result!
    }
}

/// Copies `source` into `buffer` after its first `initialized` bytes and counts them: the one copy of both output
/// spans' `append(copying:)`. `source` must fit in what is left.
@inline(__always)
private func appendCopy(
    of source: UnsafeRawBufferPointer, to buffer: UnsafeMutableRawBufferPointer, initialized: inout Int
) {
    precondition(source.count <= buffer.count - initialized, "append(copying:) past the output's capacity")
    guard let start = source.baseAddress, source.count > 0 else { return }
    (buffer.baseAddress! + initialized).copyMemory(from: start, byteCount: source.count)
    initialized += source.count
}
