extension ContentDisposition {
    /// The file's name the one way this library reads it: `filename*` when the client sent it (RFC 6266 §4.3 asks a
    /// recipient to prefer it, and Go's `mime/multipart` and Werkzeug do), else `filename`; nil for a plain field.
    ///
    /// The parser's part heads, the spooler and the `multipart` tool all name a file by this rule.
    public var preferredFilename: String? { filenameStar ?? filename }

    /// ``preferredFilename`` made safe to use as the last component of a path; see ``safeBaseName(_:)``.
    public var safeFilename: String? { preferredFilename.map(Self.safeBaseName) }

    /// A client's filename made safe to use as the last component of a path on Linux, macOS and Windows: the one
    /// helper the library's spooler and tool use.
    ///
    /// - Only what follows the last `/` or `\` is kept: browsers on Windows once sent whole paths, and either is a
    ///   separator somewhere.
    /// - Control characters (C0, DEL and C1, U+0080–U+009F), invisible format characters (bidi controls such as
    ///   U+202E, zero-width characters, U+FEFF, the soft hyphen: Unicode's `Cf`), line and paragraph separators,
    ///   and `: * ? " < > |` become `_`, so a name cannot hide or reorder what it shows.
    /// - Leading dots and spaces go (no hidden files, no `.` or `..`), and trailing dots and spaces (Windows drops
    ///   them).
    /// - A Windows device name (`CON`, `PRN`, `AUX`, `NUL`, `COM0`–`COM9`, `LPT0`–`LPT9`, their superscript-digit
    ///   forms, `CONIN$`, `CONOUT$`), in any case and with any extension, gets a `_` in front: Windows opens the
    ///   device, not a file, for `NUL.txt`.
    /// - At most 255 UTF-8 bytes, the extension kept when it is short; an empty result is `"file"`.
    ///
    /// The result is still the client's choice: two uploads can share it, so keep files under names of your own
    /// and this one as a label, or check for an existing file before using it.
    ///
    /// ```swift
    /// ContentDisposition.safeBaseName("C:\\Users\\ann\\..\\report\".pdf")   // "report_.pdf"
    /// ContentDisposition.safeBaseName("../../etc/passwd")                    // "passwd"
    /// ContentDisposition.safeBaseName("con.txt")                             // "_con.txt"
    /// ContentDisposition.safeBaseName("invoice\u{202E}fdp.exe")              // "invoice_fdp.exe"
    /// ContentDisposition.safeBaseName("..")                                  // "file"
    /// ```
    public static func safeBaseName(_ filename: String) -> String {
        let base = filename.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var scalars = String.UnicodeScalarView()
        for scalar in base.unicodeScalars {
            scalars.append(isForbiddenInFilenames(scalar) ? "_" : scalar)
        }
        var name = Substring(String(scalars))
        while let first = name.first, first == "." || first == " " { name.removeFirst() }
        while let last = name.last, last == "." || last == " " { name.removeLast() }
        let limit = 255
        if name.utf8.count > limit {
            let dot = name.lastIndex(of: ".")
            let suffix = dot.map { name[$0...] }.flatMap { $0.utf8.count <= 16 ? $0 : nil } ?? ""
            var stem = name[..<(suffix.isEmpty ? name.endIndex : suffix.startIndex)]
            while stem.utf8.count + suffix.utf8.count > limit { stem.removeLast() }
            name = stem + suffix
        }
        if isWindowsDeviceName(name) {
            name = "_" + name
            if name.utf8.count > limit { name.removeLast() }
        }
        return name.isEmpty ? "file" : String(name)
    }

    private static func isForbiddenInFilenames(_ scalar: Unicode.Scalar) -> Bool {
        if ":*?\"<>|".unicodeScalars.contains(scalar) { return true }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: return true  // C0, DEL, C1; Cf; Zl; Zp
        default: return false
        }
    }

    /// Whether Windows reads `name` as a device: its part before the first dot, without trailing spaces, is one of
    /// the reserved names, in any case.
    private static func isWindowsDeviceName(_ name: Substring) -> Bool {
        var stem = name.prefix { $0 != "." }
        while stem.last == " " { stem.removeLast() }
        let upper = stem.uppercased()
        if ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"].contains(upper) { return true }
        guard upper.count == 4, upper.hasPrefix("COM") || upper.hasPrefix("LPT"), let digit = upper.last else {
            return false
        }
        return digit.isASCII ? digit.isNumber : "¹²³".contains(digit)
    }
}
