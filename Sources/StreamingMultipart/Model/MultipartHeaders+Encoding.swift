extension MultipartHeaders {
    /// Checks that every name is an RFC 9110 token and no value holds CR, LF or NUL.
    ///
    /// - Throws: ``MultipartError/Code/invalidHeader`` naming the header and the part.
    func validate(partIndex: Int) throws {
        for field in self {
            let name = field.name.rawName.utf8
            guard !name.isEmpty, name.allSatisfy(Self.isTokenCharacter) else {
                throw MultipartError(
                    code: .invalidHeader,
                    message: "header name \(String(reflecting: field.name.rawName)) is not an RFC 9110 token",
                    partIndex: partIndex)
            }
            if let bad = field.value.utf8.first(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) {
                let what = bad == 0x0D ? "CR" : bad == 0x0A ? "LF" : "NUL"
                throw MultipartError(
                    code: .invalidHeader,
                    message: "the value of header \(field.name.rawName) holds a \(what) byte (header injection)",
                    partIndex: partIndex)
            }
        }
    }

    /// The header block as sent: `Name: value` CRLF for each field, then the empty line's CRLF.
    var encoded: [UInt8] {
        var bytes: [UInt8] = []
        for field in self {
            bytes += field.name.rawName.utf8
            bytes += ": ".utf8
            bytes += field.value.utf8
            bytes += [0x0D, 0x0A]
        }
        bytes += [0x0D, 0x0A]
        return bytes
    }

    /// `encoded.count`, counted without building the bytes.
    var encodedCount: Int {
        reduce(2) { $0 + $1.name.rawName.utf8.count + 2 + $1.value.utf8.count + 2 }
    }

    /// RFC 9110 §5.6.2 `tchar` (``!#$%&'*+-.^_`|~``, digits and letters) as a bit set, since it runs for every byte
    /// of every header name.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        let mask: UInt64 = byte < 64 ? 0x03FF_6CFA_0000_0000 : byte < 128 ? 0x57FF_FFFF_C7FF_FFFE : 0
        return mask >> (byte & 63) & 1 == 1
    }
}
