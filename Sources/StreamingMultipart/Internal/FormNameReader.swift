// Reading a field name's bytes in place, without copying them into an array, for the form decoder's tree.

/// One read of a field name's bytes, for ``FormNameStep/walk(_:keyStrategy:limits:partIndex:visit:)``.
struct FormNameReader {
    let bytes: UnsafeBufferPointer<UInt8>
    let dots: Bool
    let limits: MultipartFormDecoder.Limits
    let name: String
    let partIndex: Int

    /// Reads the steps, handing each to `visit` when there is one (the last is step `count`); returns how many
    /// there are, or nil when the name does not follow the grammar.
    func read(visit: ((FormNameStep, Bool) throws -> Void)?, count expected: Int) throws -> Int? {
        var position = 0
        while position < bytes.count, bytes[position] != UInt8(ascii: "["),
            !(dots && bytes[position] == UInt8(ascii: "."))
        {
            position += 1
        }
        guard position > 0 else { return nil }
        try visit?(.key(text(0..<position)), expected == 1)
        var count = 1
        while position < bytes.count {
            let step: FormNameStep
            if bytes[position] == UInt8(ascii: "[") {
                guard let close = bytes[(position + 1)...].firstIndex(of: UInt8(ascii: "]")) else { return nil }
                let inside = (position + 1)..<close
                if inside.isEmpty {
                    step = .append
                } else if let index = Self.index(bytes[inside]) {
                    guard index < limits.maxListLength else {
                        throw FormNameStep.limitError(
                            "the field \(name.debugDescription) has the index \(index), past the "
                                + "\(limits.maxListLength) items a list may hold (maxListLength)", partIndex: partIndex)
                    }
                    step = .index(index)
                } else {
                    step = .key(text(inside))
                }
                position = close + 1
            } else if dots && bytes[position] == UInt8(ascii: ".") {
                var end = position + 1
                while end < bytes.count, bytes[end] != UInt8(ascii: "["), bytes[end] != UInt8(ascii: ".") { end += 1 }
                guard end > position + 1 else { return nil }
                step = .key(text((position + 1)..<end))
                position = end
            } else {
                return nil
            }
            count += 1
            guard count <= limits.maxDepth else {
                throw FormNameStep.limitError(
                    "the field name \(String(name.prefix(64)).debugDescription)… nests deeper than \(limits.maxDepth) "
                        + "levels (maxDepth)", partIndex: partIndex)
            }
            try visit?(step, count == expected)
        }
        return count
    }

    private func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// The index that `digits` spell, or nil when they are not a canonical index (`007`, `-1`, `1e3`, too long).
    private static func index(_ digits: Slice<UnsafeBufferPointer<UInt8>>) -> Int? {
        guard digits.count <= 18, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            digits.count == 1 || digits.first != UInt8(ascii: "0")
        else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }
}
