import Foundation
import Hummingbird
import NIOCore
import StreamingMultipart
import StreamingMultipartHummingbird
import StreamingMultipartNIO
import StreamingMultipartServer

/// `POST /upload`: streams the request body through the parser into the spooler (never collecting it whole) and
/// answers the form as JSON; the spooled files are removed once the answer is made, or moved into `keepDirectory`
/// first when there is one.
///
/// A refusal closes the connection (`Connection: close`): the server never reads the rest of a body it refused. A
/// 200 keeps it, for the client's next form: the guards close it only if more than 256 KiB of the body comes after
/// the form's close delimiter (`HTTPServerGuards`), so an epilogue cannot keep the server reading. Errors are
/// `MultipartFormError`s, which Hummingbird answers with the library's status and client message; the whole error,
/// with the spool folder's paths, goes to the request's log line only.
struct UploadService: Sendable {
    let spooler: MultipartSpooler
    /// Which uploads run at once: a limit on all, one per client address, and the slowest cut first when full.
    let admission: UploadAdmission
    /// The most bytes of a field's value (and of a name or filename) echoed in the answer.
    let echoBytes: Int
    /// Where the files of an upload answered 200 are kept (`--keep-dir`); nil to keep none.
    let keepDirectory: String?

    /// A refusal is thrown as it is: Hummingbird answers it, and StreamingMultipartHummingbird logs it once, with
    /// the request's id.
    func upload(_ request: Request, context: UploadRequestContext) async throws -> Response {
        let ticket = try admission.ticket(for: context.remoteAddress?.ipAddress)
        defer { ticket.end() }
        let result = try await request.multipartForm(
            as: SpooledForm.self, context: context, spooler: spooler, countedBy: ticket
        ) { form in
            var result = UploadResult(form, echoBytes: echoBytes)
            if let keepDirectory {
                for (index, path) in try Self.keep(form, in: keepDirectory).enumerated() {
                    result.files[index].kept = path
                }
            }
            return result
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        let body = ByteBuffer(bytes: try encoder.encode(result))
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
    }
}

extension UploadService {
    /// Keeps `form`'s files in `folder`, all or none: moved into a staging folder of their own, which one rename
    /// then makes `folder/<id>/` (files `0`, `1`... in the form's order). Returns their paths. A failure removes the
    /// staging folder; a kill leaves it, for ``removeStaging(in:)`` at the next start: no upload is ever kept in part.
    static func keep(_ form: SpooledForm, in folder: String) throws -> [String] {
        let id = UUID().uuidString
        let staging = (folder as NSString).appendingPathComponent(Self.stagingPrefix + id)
        let kept = (folder as NSString).appendingPathComponent(id)
        do {
            try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
            for (index, file) in form.files.enumerated() {
                try file.move(to: (staging as NSString).appendingPathComponent(String(index)))
            }
            try FileManager.default.moveItem(atPath: staging, toPath: kept)
        } catch {
            try? FileManager.default.removeItem(atPath: staging)
            throw error
        }
        return form.files.indices.map { (kept as NSString).appendingPathComponent(String($0)) }
    }

    /// The name a staging folder starts with.
    static let stagingPrefix = ".staging-"

    /// Removes the staging folders a killed run left in `folder` (uploads it was keeping when it died, never
    /// answered); returns how many.
    static func removeStaging(in folder: String) throws -> Int {
        let left = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix(stagingPrefix) }
        for name in left {
            try FileManager.default.removeItem(atPath: (folder as NSString).appendingPathComponent(name))
        }
        return left.count
    }
}
