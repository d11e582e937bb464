/// Reads an `application/x-www-form-urlencoded` body (what a browser sends for a form without files) as it arrives,
/// by the WHATWG URL standard's parser: fields split on `&`, a name from its value on the first `=`, `+` a space,
/// `%XX` a byte (a `%` not followed by two hex digits stays as it is), and a field without bytes (`a=1&&b=2`)
/// skipped. Sans-I/O, as ``MultipartParser``: append the bytes, take the fields out through `emit`.
///
/// ```swift
/// var reader = URLEncodedFormReader(limits: .default)
/// for chunk in chunks { try reader.append(chunk[...]) { field in fields.append(field) } }
/// try reader.finish { field in fields.append(field) }
/// ```
///
/// The bytes are read once, each once: a `%` split from its digits by a chunk's end waits in ``State`` (two bytes
/// at most). Bounds: a name is at most ``MultipartParser/Limits/maxHeaderBytesPerPart`` decoded bytes (as a part's
/// header block bounds its name), a value at most ``MultipartParser/Limits/maxFieldBytes``, the fields at most
/// ``MultipartParser/Limits/maxParts``, and the body at most `maxBodyBytes`.
struct URLEncodedFormReader {
    /// One field, percent-decoded; `index` counts fields from 0, as part indexes do.
    struct Field {
        var name: [UInt8]
        var value: [UInt8]
        var index: Int
    }

    /// Where the reader is inside the current field.
    enum State {
        /// Reading the name; `sawBytes` once the field has any byte at all (an empty one is skipped).
        case name(sawBytes: Bool)
        /// Past the first `=`: reading the value.
        case value
    }

    /// A percent-escape begun and not yet ended by its two hex digits.
    enum Escape {
        case none
        /// `%` came.
        case percent
        /// `%` and one hex digit came.
        case percentAnd(UInt8)
    }

    let limits: MultipartParser.Limits
    /// The most bytes the body may hold.
    let maxBodyBytes: Int64
    private var state = State.name(sawBytes: false)
    private var escape = Escape.none
    private var name: [UInt8] = []
    private var value: [UInt8] = []
    private var fieldIndex = 0
    private var offset: Int64 = 0

    init(limits: MultipartParser.Limits, maxBodyBytes: Int64? = nil) {
        self.limits = limits
        self.maxBodyBytes = maxBodyBytes ?? limits.maxBodyBytes
    }

    /// Reads `bytes`, handing each field that ends in them to `emit`.
    ///
    /// - Throws: ``MultipartError/Code/limitExceeded`` naming the limit; what `emit` throws.
    mutating func append(_ bytes: ArraySlice<UInt8>, emit: (Field) throws -> Void) throws {
        guard offset + Int64(bytes.count) <= maxBodyBytes else {
            throw MultipartError(
                code: .limitExceeded,
                message: "the urlencoded form passes its body limit (\(maxBodyBytes) bytes)", offset: maxBodyBytes,
                limit: "maxBodyBytes")
        }
        for byte in bytes {
            try take(byte, emit: emit)
            offset += 1
        }
    }

    /// Ends the body: the last field, if any, goes to `emit`.
    mutating func finish(emit: (Field) throws -> Void) throws {
        try endField(emit: emit)
    }

    private mutating func take(_ byte: UInt8, emit: (Field) throws -> Void) throws {
        switch escape {
        case .none: break
        case .percent:
            if Hex.value(of: byte) != nil {
                escape = .percentAnd(byte)
                return
            }
            escape = .none
            try output(UInt8(ascii: "%"))
        case .percentAnd(let high):
            escape = .none
            if let low = Hex.value(of: byte) {
                try output(Hex.value(of: high)! << 4 | low)
                return
            }
            try output(UInt8(ascii: "%"))
            try output(high)
        }
        switch byte {
        case UInt8(ascii: "&"):
            try endField(emit: emit)
        case UInt8(ascii: "=") where !isValue:
            state = .value
        case UInt8(ascii: "%"):
            escape = .percent
        case UInt8(ascii: "+"):
            try output(0x20)
        default:
            try output(byte)
        }
    }

    private var isValue: Bool {
        if case .value = state { true } else { false }
    }

    private mutating func output(_ byte: UInt8) throws {
        switch state {
        case .name:
            guard name.count < limits.maxHeaderBytesPerPart else {
                throw breach("maxHeaderBytesPerPart", Int64(limits.maxHeaderBytesPerPart), "name")
            }
            name.append(byte)
            state = .name(sawBytes: true)
        case .value:
            guard value.count < limits.maxFieldBytes else {
                throw breach("maxFieldBytes", limits.maxFieldBytes, "value")
            }
            value.append(byte)
        }
    }

    /// Hands the field over, unless it had no bytes at all, and begins the next.
    private mutating func endField(emit: (Field) throws -> Void) throws {
        switch escape {  // an escape the field ended inside stays as it was sent
        case .none: break
        case .percent: try output(UInt8(ascii: "%"))
        case .percentAnd(let high):
            try output(UInt8(ascii: "%"))
            try output(high)
        }
        escape = .none
        if case .name(sawBytes: false) = state { return }
        guard fieldIndex < limits.maxParts else {
            throw MultipartError(
                code: .limitExceeded,
                message: "the urlencoded form passes maxParts (\(limits.maxParts) fields)", offset: offset,
                partIndex: fieldIndex, limit: "maxParts")
        }
        try emit(Field(name: name, value: value, index: fieldIndex))
        fieldIndex += 1
        name = []
        value = []
        state = .name(sawBytes: false)
    }

    private func breach(_ limit: String, _ bound: Int64, _ what: String) -> MultipartError {
        let named = String(decoding: name.prefix(64), as: UTF8.self).debugDescription
        return MultipartError(
            code: .limitExceeded,
            message:
                "field \(fieldIndex + 1) (\(named)) of the urlencoded form passes \(limit) (\(bound) bytes of its \(what))",
            offset: offset, partIndex: fieldIndex, limit: limit)
    }
}
