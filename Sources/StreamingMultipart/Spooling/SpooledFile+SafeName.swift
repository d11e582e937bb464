extension SpooledFile {
    /// A client's filename made safe to use as the last component of a path on Linux, macOS and Windows.
    ///
    /// - Only what follows the last `/` or `\` is kept: browsers on Windows once sent whole paths, and either is a
    ///   separator somewhere.
    /// - Control characters (U+0000–U+001F, U+007F) and `: * ? " < > |` become `_`.
    /// - Leading dots and spaces go (no hidden files, no `.` or `..`), and trailing dots and spaces (Windows drops
    ///   them).
    /// - At most 255 UTF-8 bytes, the extension kept when it is short; an empty result is `"file"`.
    ///
    /// The result is still the client's choice: two uploads can share it, so keep files under names of your own
    /// and this one as a label, or check for an existing file before using it.
    ///
    /// ```swift
    /// SpooledFile.safeBaseName("C:\\Users\\ann\\..\\report\".pdf")   // "report_.pdf"
    /// SpooledFile.safeBaseName("../../etc/passwd")                    // "passwd"
    /// SpooledFile.safeBaseName("..")                                  // "file"
    /// ```
    public static func safeBaseName(_ filename: String) -> String {
        let base = filename.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var scalars = String.UnicodeScalarView()
        for scalar in base.unicodeScalars {
            let forbidden = scalar.value < 0x20 || scalar.value == 0x7F || ":*?\"<>|".unicodeScalars.contains(scalar)
            scalars.append(forbidden ? "_" : scalar)
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
        return name.isEmpty ? "file" : String(name)
    }
}
