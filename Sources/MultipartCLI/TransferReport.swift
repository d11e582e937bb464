import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOHTTP1

/// What `multipart send` knows of a transfer once it ends, printed as curl prints it: `-w`'s variables, and the
/// heads `-i`, `-D` and `-v` show.
struct TransferReport {
    var httpCode = 0
    /// The body's bytes sent in the last attempt.
    var sizeUpload: Int64 = 0
    /// The response body's bytes.
    var sizeDownload: Int64 = 0
    /// From the start of the first attempt to the end of the response.
    var timeTotal: Duration = .zero
    /// The URL of the last request, after the redirects followed.
    var urlEffective: String
    var redirects = 0
    var contentType: String?
    /// The interim answers' heads (`100 Continue`) of the last attempt, as `head` writes them: `-D` and `-i` write
    /// them before the final head, as curl does.
    var interimHeads: [String] = []

    /// The variables `-w` knows, as curl 7.88 writes them: sizes and speeds in whole bytes (per second), times in
    /// seconds with six decimals.
    static let variables = [
        "http_code", "response_code", "size_upload", "size_download", "time_total", "speed_upload", "speed_download",
        "url_effective", "num_redirects", "content_type",
    ]

    func value(of variable: String) -> String? {
        let seconds = Double(timeTotal.components.seconds) + Double(timeTotal.components.attoseconds) * 1e-18
        func speed(_ bytes: Int64) -> String { seconds > 0 ? String(Int64((Double(bytes) / seconds).rounded())) : "0" }
        return switch variable {
        case "http_code", "response_code": String(format: "%03d", httpCode)
        case "size_upload": String(sizeUpload)
        case "size_download": String(sizeDownload)
        case "time_total": String(format: "%.6f", seconds)
        case "speed_upload": speed(sizeUpload)
        case "speed_download": speed(sizeDownload)
        case "url_effective": urlEffective
        case "num_redirects": String(redirects)
        case "content_type": contentType ?? ""
        default: nil
        }
    }

    /// `format` with each `%{variable}` replaced by its value, `%%` by `%`, and `\n`, `\r`, `\t` by what they
    /// say, as `curl -w` writes it. An unknown variable writes nothing and is named in `unknown`.
    func writeOut(_ format: String) -> (text: String, unknown: [String]) {
        var text = ""
        var unknown: [String] = []
        var rest = Substring(format)
        while let first = rest.first {
            if rest.hasPrefix("%{"), let close = rest.firstIndex(of: "}") {
                let name = String(rest[rest.index(rest.startIndex, offsetBy: 2)..<close])
                if let value = value(of: name) { text += value } else { unknown.append(name) }
                rest = rest[rest.index(after: close)...]
            } else if rest.hasPrefix("%%") {
                text += "%"
                rest = rest.dropFirst(2)
            } else if first == "\\", let next = rest.dropFirst().first,
                let escaped = ["n": "\n", "r": "\r", "t": "\t"][next]
            {
                text += escaped
                rest = rest.dropFirst(2)
            } else {
                text.append(first)
                rest = rest.dropFirst()
            }
        }
        return (text, unknown)
    }

    /// A response's head as it came: the status line, each header, and the blank line, each ending in CRLF.
    static func head(of response: HTTPClientResponse) -> String {
        head(version: response.version, status: response.status, headers: response.headers)
    }

    /// A head from its parts, as `head(of:)` writes it.
    static func head(version: HTTPVersion, status: HTTPResponseStatus, headers: HTTPHeaders) -> String {
        var text = "HTTP/\(version.major).\(version.minor) \(status.code) \(status.reasonPhrase)\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        return text + "\r\n"
    }

    /// `head`'s lines, each after `mark` and a space (`-v`'s `<` and `>`, as curl writes them), without their CRLF.
    static func marked(_ head: String, _ mark: String) -> String {
        head.components(separatedBy: "\r\n").dropLast().map { "\(mark) \($0)" }.joined(separator: "\n") + "\n"
    }
}

/// A ``TransferReport`` that the upload's callbacks (progress, events) fill in from the tasks they run on.
final class SharedTransferReport: Sendable {
    private let report: NIOLockedValueBox<TransferReport>

    init(_ report: TransferReport) { self.report = NIOLockedValueBox(report) }

    func update(_ change: (inout TransferReport) -> Void) { report.withLockedValue { change(&$0) } }

    var value: TransferReport { report.withLockedValue { $0 } }
}
