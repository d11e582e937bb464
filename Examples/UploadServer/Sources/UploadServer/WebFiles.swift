import Foundation

/// The browser files the server serves from its resources (`Web/`): `GET /resumable` (an upload page that resumes
/// after a dropped connection) and `GET /resumable-form.js` (the dependency-free module it uses, for any page).
///
/// They are read once, at start, from the resource bundle SwiftPM puts beside the binary
/// (`UploadServer_UploadServer.resources`). A binary copied without it still runs: the two paths answer 404 and the
/// start says so, where `Bundle.module` would stop the process.
enum WebFiles {
    struct File: Sendable {
        let path: String
        let contentType: String
        let bytes: Data
    }

    /// The files found, by request path.
    static func load() -> (files: [String: File], missing: [String]) {
        let wanted = [
            ("/resumable", "resumable.html", "text/html; charset=utf-8"),
            ("/resumable-form.js", "resumable-form.js", "text/javascript; charset=utf-8"),
        ]
        let folders = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()].map {
            $0.appendingPathComponent("UploadServer_UploadServer.resources/Web")
        }
        var files: [String: File] = [:]
        var missing: [String] = []
        for (path, name, type) in wanted {
            if let bytes = folders.lazy.compactMap({ try? Data(contentsOf: $0.appendingPathComponent(name)) }).first {
                files[path] = File(path: path, contentType: type, bytes: bytes)
            } else {
                missing.append(name)
            }
        }
        return (files, missing)
    }
}
