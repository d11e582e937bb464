// Reading a field name's bytes in place, without copying them into an array, for the form decoder's tree.

/// How to read a field name's bytes into steps, for ``FormNameStep/walk(_:keyStrategy:limits:partIndex:visit:)``.
struct FormNameReader {
    let dots: Bool
    let limits: MultipartFormDecoder.Limits
    let name: String
    let partIndex: Int

    /// Reads the steps, handing each to `visit` when there is one (the last is step `count`); returns how many
    /// there are, or nil when the name does not follow the grammar.
    func read(
        _ bytes: Span<UInt8>, visit: ((FormNameStep, Bool) throws -> Void)?, count expected: Int
    ) throws -> Int? {
        var position = 0
        while position < bytes.count, bytes[position] != UInt8(ascii: "["),
            !(dots && bytes[position] == UInt8(ascii: "."))
        {
            position += 1
        }
        guard position > 0 else { return nil }
        try visit?(.key(text(bytes, 0..<position)), expected == 1)
        var count = 1
        while position < bytes.count {
            let step: FormNameStep
            if bytes[position] == UInt8(ascii: "[") {
                var close = position + 1
                while close < bytes.count, bytes[close] != UInt8(ascii: "]") { close += 1 }
                guard close < bytes.count else { return nil }
                let inside = (position + 1)..<close
                if inside.isEmpty {
                    step = .append
                } else if let index = Self.index(bytes.extracting(inside)) {
                    guard index < limits.maxListLength else {
                        throw FormNameStep.limitError(
                            "the field \(name.debugDescription) has the index \(index), past the "
                                + "\(limits.maxListLength) items a list may hold (maxListLength)",
                            limit: "maxListLength", partIndex: partIndex)
                    }
                    step = .index(index)
                } else {
                    step = .key(text(bytes, inside))
                }
                position = close + 1
            } else if dots && bytes[position] == UInt8(ascii: ".") {
                var end = position + 1
                while end < bytes.count, bytes[end] != UInt8(ascii: "["), bytes[end] != UInt8(ascii: ".") { end += 1 }
                guard end > position + 1 else { return nil }
                step = .key(text(bytes, (position + 1)..<end))
                position = end
            } else {
                return nil
            }
            count += 1
            guard count <= limits.maxDepth else {
                throw FormNameStep.limitError(
                    "the field name \(String(name.prefix(64)).debugDescription)… nests deeper than \(limits.maxDepth) "
                        + "levels (maxDepth)", limit: "maxDepth", partIndex: partIndex)
            }
            try visit?(step, count == expected)
        }
        return count
    }

    private func text(_ bytes: Span<UInt8>, _ range: Range<Int>) -> String {
        String(decodingUTF8: bytes.extracting(range))
    }

    /// The index that `digits` spell, or nil when they are not a canonical index (`007`, `-1`, `1e3`, too long).
    private static func index(_ digits: Span<UInt8>) -> Int? {
        guard digits.count <= 18, digits.count == 1 || digits[0] != UInt8(ascii: "0") else { return nil }
        var value = 0
        for position in digits.indices {
            let digit = digits[position]
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
        }
        return value
    }
}
