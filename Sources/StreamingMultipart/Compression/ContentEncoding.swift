/// A request's `Content-Encoding`, as the decompressing parser reads it (RFC 9110 §8.4).
public enum ContentEncoding: Sendable, Hashable {
    /// No coding: `identity`, or no header at all.
    case identity
    /// `gzip` or `x-gzip`.
    case gzip
    /// `deflate`: zlib-wrapped as RFC 9110 defines it, or raw deflate as some clients send it; the first two bytes
    /// tell which.
    case deflate

    /// Reads a `Content-Encoding` header value; nil (no header) is ``identity``.
    ///
    /// - Throws: ``MultipartError/Code/unsupportedContentEncoding`` for any other coding, or a list of codings
    ///   (`gzip, gzip`): each layer would multiply what a small body can inflate to.
    public init(headerValue: String?) throws {
        let value = (headerValue ?? "").trimmingSpacesAndTabs.lowercased()
        switch value {
        case "", "identity": self = .identity
        case "gzip", "x-gzip": self = .gzip
        case "deflate": self = .deflate
        default:
            let isList = value.contains(",")
            throw MultipartError(
                code: .unsupportedContentEncoding,
                message: isList
                    ? "Content-Encoding \(String(reflecting: value)) lists several codings; one of gzip, deflate or identity is accepted"
                    : "Content-Encoding \(String(reflecting: value)) is not gzip, x-gzip, deflate or identity")
        }
    }

    /// Whether `bytes` begin with a zlib header (RFC 1950 §2.2: method 8, a window of at most 32 KiB, and the
    /// header's check bits), which tells zlib-wrapped `deflate` from raw deflate.
    static func beginsWithZlibHeader(_ bytes: some Collection<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        guard let cmf = iterator.next(), let flg = iterator.next() else { return false }
        return cmf & 0x0F == 8 && cmf >> 4 <= 7 && (UInt16(cmf) << 8 | UInt16(flg)) % 31 == 0
    }
}

extension String {
    fileprivate var trimmingSpacesAndTabs: String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
