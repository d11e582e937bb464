extension ContentType {
    /// The media type of a `Content-Type` value as a browser reads it: the essence of the WHATWG MIME Sniffing
    /// standard's "parse a MIME type" (§4.4), `type/subtype` in lower case, with the whitespace around it and every
    /// parameter left out, whether the parameters parse or not. Nil when the value has no `type/subtype` of token
    /// characters (RFC 9110 §5.6.2).
    ///
    /// Compare this, never the raw value, in anything that decides by type: `image/SVG+XML`,
    /// `image/svg+xml; charset=utf-8` and `image/svg+xml;` are all `image/svg+xml` to a browser.
    ///
    /// ```swift
    /// ContentType.mediaType(of: " image/SVG+XML; charset=utf-8")   // "image/svg+xml"
    /// ContentType.mediaType(of: "image/svg+xml;")                  // "image/svg+xml"
    /// ContentType.mediaType(of: "svg")                             // nil
    /// ```
    public static func mediaType(of value: String) -> String? {
        let bytes = Array(value.utf8)
        func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        var start = 0
        var end = bytes.count
        while start < end, isWhitespace(bytes[start]) { start += 1 }
        while end > start, isWhitespace(bytes[end - 1]) { end -= 1 }
        guard let slash = bytes[start..<end].firstIndex(of: UInt8(ascii: "/")) else { return nil }
        var subtypeEnd = bytes[slash..<end].firstIndex(of: UInt8(ascii: ";")) ?? end
        while subtypeEnd > slash + 1, isWhitespace(bytes[subtypeEnd - 1]) { subtypeEnd -= 1 }
        let type = bytes[start..<slash]
        let subtype = bytes[(slash + 1)..<subtypeEnd]
        guard !type.isEmpty, !subtype.isEmpty, type.allSatisfy(MultipartHeaders.isTokenCharacter),
            subtype.allSatisfy(MultipartHeaders.isTokenCharacter)
        else { return nil }
        return String(decoding: bytes[start..<subtypeEnd], as: UTF8.self).lowercased()
    }
}
