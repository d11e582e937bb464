import Foundation

/// Content types by file extension: a built-in table of the common web types first, then the system's
/// `/etc/mime.types` when present, then `application/octet-stream`.
///
/// The built-in table wins so that a body built from the same files is the same on every machine.
enum MediaTypes {
    /// The type every unknown extension gets (RFC 7578 §4.4).
    static let fallback = "application/octet-stream"

    /// The content type for `filename`'s extension (case-insensitive).
    static func type(forFilename filename: String) -> String {
        guard let dot = filename.lastIndex(of: "."), dot != filename.startIndex else { return fallback }
        let ext = filename[filename.index(after: dot)...].lowercased()
        return builtIn[ext] ?? system[ext] ?? fallback
    }

    private static let builtIn: [String: String] = [
        "txt": "text/plain", "text": "text/plain", "log": "text/plain", "md": "text/markdown",
        "csv": "text/csv", "tsv": "text/tab-separated-values", "html": "text/html", "htm": "text/html",
        "css": "text/css", "js": "text/javascript", "mjs": "text/javascript", "xml": "application/xml",
        "json": "application/json", "pdf": "application/pdf", "zip": "application/zip",
        "gz": "application/gzip", "tar": "application/x-tar", "bin": "application/octet-stream",
        "wasm": "application/wasm", "rtf": "application/rtf", "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt": "application/vnd.ms-powerpoint",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif",
        "webp": "image/webp", "avif": "image/avif", "heic": "image/heic", "heif": "image/heif",
        "svg": "image/svg+xml", "ico": "image/vnd.microsoft.icon", "bmp": "image/bmp", "tif": "image/tiff",
        "tiff": "image/tiff", "mp3": "audio/mpeg", "m4a": "audio/mp4", "aac": "audio/aac", "wav": "audio/wav",
        "ogg": "audio/ogg", "oga": "audio/ogg", "opus": "audio/opus", "flac": "audio/flac",
        "mp4": "video/mp4", "m4v": "video/mp4", "mov": "video/quicktime", "webm": "video/webm",
        "ogv": "video/ogg", "avi": "video/x-msvideo", "mkv": "video/x-matroska",
        "woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf",
    ]

    /// `/etc/mime.types`, read once: lines of `type ext ext …`, `#` comments.
    private static let system: [String: String] = {
        guard let text = try? String(contentsOfFile: "/etc/mime.types", encoding: .utf8) else { return [:] }
        var table: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let type = words.first else { continue }
            for ext in words.dropFirst() where table[ext.lowercased()] == nil {
                table[ext.lowercased()] = String(type)
            }
        }
        return table
    }()
}
