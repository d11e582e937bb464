extension ContentType {
    /// How many of a resource's first bytes ``sniffedMediaType(of:)`` reads: the WHATWG MIME Sniffing standard's
    /// resource header (§5.2), 1,445 bytes.
    public static let sniffedHeaderLength = 1445

    /// The media type a file's first bytes show, whatever its name or `Content-Type` say: the WHATWG MIME Sniffing
    /// standard's rules for identifying a resource with an unknown MIME type (§7.1), with the sniff-scriptable flag
    /// set (the markup a browser would run is looked for), on the first ``sniffedHeaderLength`` bytes.
    ///
    /// In the standard's order: HTML and XML markers (after leading whitespace) and PDF; PostScript and the UTF-8
    /// and UTF-16 byte order marks (`text/plain`); images (ICO and CUR, BMP, GIF, WebP, PNG, JPEG); audio and video
    /// (AIFF, MP3, Ogg, MIDI, AVI, WAVE, MP4, WebM); archives (gzip, ZIP, RAR); then `text/plain` when no byte is
    /// binary, else `application/octet-stream`. Three extensions, each a type the standard's table does not return,
    /// as §7.1 allows:
    /// - SVG is `image/svg+xml`, not the `text/xml` or `text/plain` the table gives it: a document that starts with
    ///   `<svg` or `<!DOCTYPE svg`, or an XML document (`<?xml`) whose header holds an `<svg` tag;
    /// - the standard's font table (§6.3: EOT, TrueType, OpenType, collections, WOFF, WOFF2), which browsers use for
    ///   fonts only, comes after audio and video;
    /// - MP3 without an ID3 tag is two Layer III frame headers one frame apart, the frame's size computed by the
    ///   MPEG tables (the standard's steps for it have known errors).
    ///
    /// Decide by what a file is, not by what it is not: accept the types a route takes, and refuse the rest.
    ///
    /// ```swift
    /// ContentType.sniffedMediaType(of: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])  // "image/png"
    /// ContentType.sniffedMediaType(of: Array("  <svg xmlns=\"http://www.w3.org/2000/svg\">".utf8))  // "image/svg+xml"
    /// ContentType.sniffedMediaType(of: Array("<HTML><body>".utf8))  // "text/html"
    /// ContentType.sniffedMediaType(of: Array("name,size\n".utf8))  // "text/plain"
    /// ```
    public static func sniffedMediaType(of bytes: [UInt8]) -> String { sniffedMediaType(of: bytes.span) }

    /// ``sniffedMediaType(of:)-([UInt8])`` on bytes read where they are (a file's first chunk, say), not copied.
    static func sniffedMediaType(of bytes: Span<UInt8>) -> String {
        let header = bytes.extracting(first: sniffedHeaderLength)
        // Every scriptable row but PDF's begins with `<` after whitespace: a file that does not is none of them.
        var first = 0
        while first < header.count, SniffPattern.isWhitespace(header[first]) { first += 1 }
        let scriptable =
            first < header.count && header[first] == UInt8(ascii: "<") ? SniffPattern.scriptable : SniffPattern.pdf
        if let type = SniffPattern.firstMatch(in: scriptable, header) {
            return type == "text/xml" && SniffPattern.holdsSVGTag(header) ? "image/svg+xml" : type
        }
        if let type = SniffPattern.firstMatch(in: SniffPattern.beforeSteps, header) { return type }
        if SniffPattern.isMP4(header) { return "video/mp4" }
        if SniffPattern.isWebM(header) { return "video/webm" }
        if SniffPattern.isMP3WithoutID3(header) { return "audio/mpeg" }
        if let type = SniffPattern.firstMatch(in: SniffPattern.afterSteps, header) { return type }
        for index in header.indices where SniffPattern.isBinary(header[index]) { return "application/octet-stream" }
        return "text/plain"
    }
}

/// One row of a MIME Sniffing table (§4 of the standard): the bytes, a mask for each (0xFF exact, 0xDF an ASCII
/// letter in either case, 0x00 any byte), whether leading whitespace is skipped, the bytes one of which must follow
/// (none: anything may), and the type a match gives.
struct SniffPattern: Sendable {
    let bytes: [UInt8]
    let mask: [UInt8]
    let skipsWhitespace: Bool
    let tagEnds: [UInt8]
    let type: String
    /// The first byte of ``bytes`` and its mask, stored beside the arrays: most rows fail on it, and a sniff then
    /// reads no array of the row's.
    private(set) var lead: UInt8 = 0
    private(set) var leadMask: UInt8 = 0

    /// The standard's tag-terminating bytes: a space or `>`.
    static let tagTerminating: [UInt8] = [0x20, 0x3E]
    /// What may end an SVG's start tag in XML: whitespace, `>`, or `/` (`<svg/>`).
    static let svgTagEnds: [UInt8] = [0x09, 0x0A, 0x0D, 0x20, 0x2F, 0x3E]

    /// A row matched exactly, or with `?` matching any byte (the table's 0x00 mask).
    init(exactly text: String, _ type: String) {
        bytes = text.utf8.map { $0 == UInt8(ascii: "?") ? 0 : $0 }
        mask = text.utf8.map { $0 == UInt8(ascii: "?") ? 0 : 0xFF }
        skipsWhitespace = false
        tagEnds = []
        self.type = type
        (lead, leadMask) = (bytes.first ?? 0, mask.first ?? 0)
    }

    init(bytes: [UInt8], _ type: String) {
        self.bytes = bytes
        mask = [UInt8](repeating: 0xFF, count: bytes.count)
        skipsWhitespace = false
        tagEnds = []
        self.type = type
        (lead, leadMask) = (bytes.first ?? 0, mask.first ?? 0)
    }

    /// A markup row: leading whitespace skipped, letters in either case (unless `caseSensitive`), and one of
    /// `tagEnds` after it (the standard's tag-terminating bytes unless told; none: anything may follow).
    init(markup text: String, caseSensitive: Bool = false, tagEnds: [UInt8] = tagTerminating, _ type: String) {
        func isLetter(_ byte: UInt8) -> Bool { !caseSensitive && (0x41...0x5A).contains(byte & 0xDF) }
        bytes = text.utf8.map { isLetter($0) ? $0 & 0xDF : $0 }
        mask = text.utf8.map { isLetter($0) ? 0xDF : 0xFF }
        skipsWhitespace = true
        self.tagEnds = tagEnds
        self.type = type
        (lead, leadMask) = (bytes.first ?? 0, mask.first ?? 0)
    }

    /// The type of the first of `rows` that `input` matches, in order; nil when none does. The rows are read in
    /// place, not copied out one by one (each copy retains its four arrays: most of a sniff's time).
    static func firstMatch(in rows: [SniffPattern], _ input: Span<UInt8>) -> String? {
        let rows = rows.span
        for index in rows.indices where rows[index].matches(input) { return rows[index].type }
        return nil
    }

    /// The standard's pattern matching algorithm (§4), kept inside `input` where its step 2 checks the length
    /// before the skipped whitespace.
    func matches(_ input: Span<UInt8>) -> Bool {
        var start = 0
        if skipsWhitespace {
            while start < input.count, Self.isWhitespace(input[start]) { start += 1 }
        }
        guard start < input.count, input[start] & leadMask == lead,
            input.count - start >= bytes.count + (tagEnds.isEmpty ? 0 : 1)
        else { return false }
        for index in bytes.indices where input[start + index] & mask[index] != bytes[index] { return false }
        return tagEnds.isEmpty || tagEnds.contains(input[start + bytes.count])
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x09, 0x0A, 0x0C, 0x0D, 0x20: true
        default: false
        }
    }
    /// A binary data byte (§3): a control character that no text holds.
    static func isBinary(_ byte: UInt8) -> Bool {
        byte <= 0x08 || byte == 0x0B || (0x0E...0x1A).contains(byte) || (0x1C...0x1F).contains(byte)
    }

    /// The markup a browser runs script in (the sniff-scriptable rows), SVG's rows first, and PDF.
    static let scriptable: [SniffPattern] =
        [
            SniffPattern(markup: "<svg", tagEnds: svgTagEnds, "image/svg+xml"),
            SniffPattern(markup: "<!DOCTYPE svg", tagEnds: svgTagEnds, "image/svg+xml"),
        ]
        + [
            "<!DOCTYPE HTML", "<HTML", "<HEAD", "<SCRIPT", "<IFRAME", "<H1", "<DIV", "<FONT", "<TABLE", "<A", "<STYLE",
            "<TITLE", "<B", "<BODY", "<BR", "<P",
        ].map { SniffPattern(markup: $0, "text/html") }
        + [
            SniffPattern(markup: "<!--", "text/html"),
            SniffPattern(markup: "<?xml", caseSensitive: true, tagEnds: [], "text/xml"),
        ] + pdf

    /// The one scriptable row that does not begin with `<`.
    static let pdf = [SniffPattern(exactly: "%PDF-", "application/pdf")]

    /// The rows the standard reads before its MP4, WebM and MP3 steps, in its order, and the rows after them.
    static let beforeSteps = textMarks + images + audioAndVideo
    static let afterSteps = fonts + archives

    /// PostScript and the byte order marks.
    static let textMarks = [
        SniffPattern(exactly: "%!PS-Adobe-", "application/postscript"),
        SniffPattern(bytes: [0xFE, 0xFF], "text/plain"), SniffPattern(bytes: [0xFF, 0xFE], "text/plain"),
        SniffPattern(bytes: [0xEF, 0xBB, 0xBF], "text/plain"),
    ]

    static let images = [
        SniffPattern(bytes: [0, 0, 1, 0], "image/x-icon"), SniffPattern(bytes: [0, 0, 2, 0], "image/x-icon"),
        SniffPattern(exactly: "BM", "image/bmp"), SniffPattern(exactly: "GIF87a", "image/gif"),
        SniffPattern(exactly: "GIF89a", "image/gif"), SniffPattern(exactly: "RIFF????WEBPVP", "image/webp"),
        SniffPattern(bytes: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "image/png"),
        SniffPattern(bytes: [0xFF, 0xD8, 0xFF], "image/jpeg"),
    ]

    static let audioAndVideo = [
        SniffPattern(exactly: "FORM????AIFF", "audio/aiff"), SniffPattern(exactly: "ID3", "audio/mpeg"),
        SniffPattern(bytes: Array("OggS".utf8) + [0], "application/ogg"),
        SniffPattern(bytes: Array("MThd".utf8) + [0, 0, 0, 6], "audio/midi"),
        SniffPattern(exactly: "RIFF????AVI ", "video/avi"), SniffPattern(exactly: "RIFF????WAVE", "audio/wave"),
    ]

    static let fonts = [
        SniffPattern(exactly: String(repeating: "?", count: 34) + "LP", "application/vnd.ms-fontobject"),
        SniffPattern(bytes: [0, 1, 0, 0], "font/ttf"), SniffPattern(exactly: "OTTO", "font/otf"),
        SniffPattern(exactly: "ttcf", "font/collection"), SniffPattern(exactly: "wOFF", "font/woff"),
        SniffPattern(exactly: "wOF2", "font/woff2"),
    ]

    static let archives = [
        SniffPattern(bytes: [0x1F, 0x8B, 0x08], "application/x-gzip"),
        SniffPattern(bytes: [0x50, 0x4B, 0x03, 0x04], "application/zip"),
        SniffPattern(bytes: Array("Rar!".utf8) + [0x1A, 0x07, 0x00], "application/x-rar-compressed"),
    ]
}
