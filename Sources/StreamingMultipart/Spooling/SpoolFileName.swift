/// The names a spooler gives its files, by which the sweep tells them from anything else in the folder.
///
/// ```swift
/// SpoolFileName.matches("upload-0123456789abcdef0123456789abcdef")  // true
/// SpoolFileName.matches("upload-photo.jpg")                          // false
/// ```
enum SpoolFileName {
    /// The fixed start of every spooled file's name; 32 lower-case hex digits follow.
    static let prefix = "upload-"

    /// Whether `name` is exactly a spooled file's name: the prefix and 32 lower-case hex digits, nothing else.
    static func matches(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        let prefix = Array(Self.prefix.utf8)
        guard bytes.count == prefix.count + 32, bytes.starts(with: prefix) else { return false }
        return bytes.dropFirst(prefix.count).allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
