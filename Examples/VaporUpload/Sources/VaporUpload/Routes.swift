import Foundation
import StreamingMultipart
import StreamingMultipartCrypto
import StreamingMultipartNIO
import StreamingMultipartServer
import StreamingMultipartVapor
import Vapor

/// The form both upload routes take: a caption and any number of photos.
public struct Upload: Decodable, Sendable {
    public var caption: String
    public var photos: [SpooledFile]
}

/// Where the spooler writes, its limits, and the server's guards.
public struct UploadSettings: Sendable {
    public var spoolDirectory: URL
    public var limits: MultipartSpooler.Limits
    /// A connection that sends and receives nothing for this many seconds is closed (Vapor's `idleTimeout`, which
    /// is off unless set): idle and half-sent connections do not stay open.
    public var idleTimeoutSeconds: Int64 = 30
    /// The most bytes the MultipartKit comparison route collects in memory; nil (the default) does not mount the
    /// route at all, since every body it takes is held whole.
    public var kitRouteMaxBytes: Int? = nil
    /// Which uploads run at once (the library's `UploadAdmission`): at most 64, 8 from one address, and when all
    /// are taken, the slowest one below 64 KiB/s that has run 10 s is cut (503) to make room for a new one.
    public var admission = UploadAdmission.Configuration(maxUploads: 64)
    /// Whether the app runs behind the nginx of `Deploy/`, which sets `X-Forwarded-For` to the client's address:
    /// then that header is the address the per-address limit counts. Off, the connection's address is counted and
    /// the header ignored, since a client can send any value in it.
    public var behindProxy = false
    /// At start, spooled files a crashed or killed run left in ``spoolDirectory`` are removed once last written
    /// this long ago (`MultipartSpooler.removeStaleFiles(olderThan:)`); nil removes none. An hour by default: past
    /// any upload's life, so that a second app sharing the folder keeps the files of the uploads it is reading.
    /// Zero removes every spool file there, for a folder only this app uses.
    public var staleAfter: Duration? = .seconds(3600)

    /// What the app says at start when it is not behind the proxy (``behindProxy`` off): exposed directly, a Vapor 4
    /// app has no header deadline, no connection bound and reads every refused body (Vapor gives no place for
    /// those guards), so a slowloris or a descriptor flood reaches it. Nil behind the proxy.
    public var exposureWarning: String? {
        behindProxy
            ? nil
            : "this app is not behind a proxy (BEHIND_PROXY=1): it has no header deadline, no bound on "
                + "connections and reads refused bodies to their end; put Deploy/nginx.conf in front of it "
                + "(README: Deploy it behind nginx)"
    }

    public init(spoolDirectory: URL, limits: MultipartSpooler.Limits = .default) {
        self.spoolDirectory = spoolDirectory
        self.limits = limits
    }
}

/// The routes:
/// - `GET /`: a page with the upload form;
/// - `POST /upload`: the body streams into the spooler and the decoder
///   (`req.multipartForm(as:spooler:countedBy:)`), never whole in memory, once the admission has given it a slot
///   (429 past an address's share, 503 when every slot is held); errors are answered as JSON with the library's
///   status (413 past a limit, 422 naming a missing field);
/// - `POST /kit/upload`, only when ``UploadSettings/kitRouteMaxBytes`` is set: the same form the MultipartKit way,
///   for comparison: Vapor collects the body in memory (up to that size) and `req.content.decode` reads it.
///
/// Both answer the caption and each photo's name, size and SHA-256.
public func routes(_ app: Application, settings: UploadSettings) throws {
    try FileManager.default.createDirectory(at: settings.spoolDirectory, withIntermediateDirectories: true)
    if let warning = settings.exposureWarning { app.logger.warning("\(warning)") }
    app.useMultipartUploads(idleTimeout: .seconds(settings.idleTimeoutSeconds))
    let spooler = MultipartSpooler(
        directory: settings.spoolDirectory, limits: settings.limits, digest: SHA256Digest.self)
    if let age = settings.staleAfter {  // before the first upload: what a killed run left
        let removed = try spooler.removeStaleFiles(olderThan: age)
        app.logger.info("removed \(removed) spooled files an earlier run left in \(settings.spoolDirectory.path)")
    }

    app.get { _ in
        Response(status: .ok, headers: ["Content-Type": "text/html; charset=utf-8"], body: .init(string: formPage))
    }

    let admission = UploadAdmission(settings.admission)

    app.on(.POST, "upload", body: .stream) { req async throws -> Response in
        let peer = settings.behindProxy ? req.headers.first(name: .xForwardedFor) : req.remoteAddress?.ipAddress
        let ticket = try admission.ticket(for: peer)  // 429 past an address's share, 503 when every slot is held
        defer { ticket.end() }
        return try await req.multipartForm(as: Upload.self, spooler: spooler, countedBy: ticket) { upload in
            try UploadAnswer(
                caption: upload.caption,
                photos: upload.photos.map {
                    .init(filename: $0.filename, size: $0.byteCount, sha256: $0.digest?.hex ?? "")
                }
            ).response()
        }
    }

    guard let kitRouteMaxBytes = settings.kitRouteMaxBytes else { return }
    app.on(.POST, "kit", "upload", body: .collect(maxSize: ByteCount(value: kitRouteMaxBytes))) {
        req async throws -> Response in
        let upload = try req.content.decode(KitUpload.self)
        return try UploadAnswer(
            caption: upload.caption,
            photos: upload.photos.map { photo in
                var digest = SHA256Digest()
                let bytes = Array(photo.data.readableBytesView)
                digest.update(bytes.span)
                return .init(
                    filename: photo.filename, size: Int64(bytes.count), sha256: PartHex.hex(digest.finalize()))
            }
        ).response()
    }
}

/// The form as MultipartKit reads it: Vapor's `File` holds a whole file in memory.
struct KitUpload: Content {
    var caption: String
    var photos: [File]
}

/// What both routes answer. Text the client sent is echoed up to ``echoBytes`` bytes each: a client that never
/// reads its answer then pins that much, not a whole field (ten of them had held 94 MB).
struct UploadAnswer: Codable {
    static let echoBytes = 256

    struct Photo: Codable {
        var filename: String
        var size: Int64
        var sha256: String
    }

    var caption: String
    var photos: [Photo]

    init(caption: String, photos: [Photo]) {
        self.caption = Self.echo(caption)
        self.photos = photos.map { Photo(filename: Self.echo($0.filename), size: $0.size, sha256: $0.sha256) }
    }

    /// At most ``echoBytes`` bytes of `text`, never half a character.
    static func echo(_ text: String) -> String {
        guard text.utf8.count > echoBytes else { return text }
        var bytes = Array(text.utf8.prefix(echoBytes))
        while !bytes.isEmpty, String(bytes: bytes, encoding: .utf8) == nil { bytes.removeLast() }  // at most 3
        return String(decoding: bytes, as: UTF8.self)
    }

    func response() throws -> Response {
        let response = Response(status: .ok)
        try response.content.encode(self, as: .json)
        return response
    }
}

/// Lower-case hex of a digest.
enum PartHex {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}
