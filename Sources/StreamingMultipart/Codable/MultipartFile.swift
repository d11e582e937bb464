public import Foundation

/// A file in a `Codable` form: bytes in memory or a file on disk, with the filename and content type to send.
///
/// ```swift
/// struct Upload: Codable {
///     var caption: String
///     var photo: MultipartFile
/// }
///
/// let upload = Upload(caption: "Sunset", photo: try MultipartFile(contentsOf: photoURL, contentType: "image/jpeg"))
/// let body = try MultipartFormEncoder().encode(upload)
/// ```
///
/// ``MultipartFormEncoder`` sends it as one file part (a file on disk is read only when the body is read).
/// Other encoders (JSON, a property list) see an object: `filename`, `contentType`, and `data` or `path`.
public struct MultipartFile: Sendable, Hashable {
    /// Where the file's bytes are.
    public enum Source: Sendable, Hashable {
        case data(Data)
        /// A regular file on a local file system.
        case file(URL)
    }

    public var source: Source
    /// The name sent as the part's `filename`.
    public var filename: String
    /// The part's `Content-Type`; nil infers it from the filename's extension.
    public var contentType: String?

    /// Bytes in memory.
    public init(_ data: Data, filename: String, contentType: String? = nil) {
        self.source = .data(data)
        self.filename = filename
        self.contentType = contentType
    }

    /// A file on disk, read only when the body is read.
    ///
    /// - Parameters:
    ///   - url: a file URL.
    ///   - filename: defaults to the URL's last path component.
    ///   - contentType: nil infers it from the filename's extension.
    public init(contentsOf url: URL, filename: String? = nil, contentType: String? = nil) {
        self.source = .file(url)
        self.filename = filename ?? url.lastPathComponent
        self.contentType = contentType
    }

    init(source: Source, filename: String, contentType: String?) {
        self.source = source
        self.filename = filename
        self.contentType = contentType
    }

    /// The part this file is sent as under `name`.
    ///
    /// - Throws: what `MultipartPart.file(at:name:filename:contentType:)` throws for a file that cannot be read.
    func part(name: String) throws -> MultipartPart {
        switch source {
        case .data(let data): .data(data, name: name, filename: filename, contentType: contentType)
        case .file(let url): try .file(at: url, name: name, filename: filename, contentType: contentType)
        }
    }
}

extension MultipartFile: Codable {
    private enum CodingKeys: String, CodingKey {
        case filename, contentType, data, path
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let filename = try container.decode(String.self, forKey: .filename)
        let contentType = try container.decodeIfPresent(String.self, forKey: .contentType)
        if let path = try container.decodeIfPresent(String.self, forKey: .path) {
            self.init(contentsOf: URL(fileURLWithPath: path), filename: filename, contentType: contentType)
        } else {
            self.init(try container.decode(Data.self, forKey: .data), filename: filename, contentType: contentType)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(filename, forKey: .filename)
        try container.encodeIfPresent(contentType, forKey: .contentType)
        switch source {
        case .data(let data): try container.encode(data, forKey: .data)
        case .file(let url): try container.encode(url.path, forKey: .path)
        }
    }
}
