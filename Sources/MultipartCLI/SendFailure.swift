import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import StreamingMultipart

/// Why `multipart send` failed, as one line and curl's exit status for the same failure.
struct SendFailure: Error {
    var exitCode: Int32
    var message: String

    static let timedOut = SendFailure(exitCode: 28, message: "timed out")

    static func httpStatus(_ code: Int, reason: String) -> SendFailure {
        SendFailure(exitCode: 22, message: "the server answered \(code) \(reason)")
    }

    static func writeFailed(_ path: String, _ error: any Error) -> SendFailure {
        SendFailure(exitCode: 23, message: "writing the response to \(path) failed: \(error.localizedDescription)")
    }

    init(exitCode: Int32, message: String) {
        self.exitCode = exitCode
        self.message = message
    }

    /// The failure an error of the transfer means, with the URL's host named where it helps.
    init(_ error: any Error, url: String, maxTime: Double?) {
        let target = URL(string: url).map { "\($0.host ?? "?"):\($0.port ?? ($0.scheme == "https" ? 443 : 80))" } ?? url
        switch error {
        case let failure as SendFailure where failure.exitCode == 28:
            self.init(exitCode: 28, message: "timed out after \(maxTime.map { "\($0)" } ?? "?") s (--max-time)")
        case let failure as SendFailure:
            self = failure
        case let error as ProxySetting.Invalid:
            // curl's status for a proxy it cannot read: 5, "couldn't resolve proxy" (and "unsupported proxy syntax").
            self.init(exitCode: 5, message: error.description)
        case let error as MultipartError where error.code == .limitExceeded:
            // The one limit a send meets: resumption's bound on bytes the server did not keep (curl's 55, a failure
            // sending network data); building a form meets none.
            self.init(exitCode: 55, message: "the upload was given up: \(error.message)")
        case let error as MultipartError:
            self.init(exitCode: 26, message: "reading the form failed: \(error.sentence)")
        case let error as NIOConnectionError where error.connectionErrors.isEmpty:
            self.init(exitCode: 6, message: "could not resolve host \(error.host)")
        case let error as NIOConnectionError:
            let cause = error.connectionErrors.first.map { Self.describe($0.error) } ?? "failed"
            self.init(exitCode: 7, message: "could not connect to \(target): \(cause)")
        case let error as IOError where error.errnoCode == ECONNREFUSED:
            self.init(exitCode: 7, message: "could not connect to \(target): connection refused")
        case let error as HTTPClientError:
            self = Self.classify(error, target: target)
        case let error as NIOSSLError:
            self = Self.classify(error, target: target)
        case let error as NIOSSLExtraError where "\(error)".contains("hostname"):
            self.init(exitCode: 60, message: "the certificate of \(target) is not for this host: \(error)")
        case let error as IOError:
            self.init(exitCode: 56, message: "the connection to \(target) broke: \(Self.describe(error))")
        default:
            self.init(exitCode: 56, message: "the transfer to \(target) failed: \(error)")
        }
    }

    private static func classify(_ error: HTTPClientError, target: String) -> SendFailure {
        switch error {
        case .connectTimeout:
            SendFailure(exitCode: 28, message: "connecting to \(target) timed out (--connect-timeout)")
        case .readTimeout, .writeTimeout, .deadlineExceeded:
            SendFailure(exitCode: 28, message: "the transfer with \(target) timed out")
        case .redirectLimitReached, .redirectCycleDetected:
            SendFailure(exitCode: 47, message: "too many redirects (--max-redirs)")
        case .remoteConnectionClosed:
            SendFailure(exitCode: 52, message: "\(target) closed the connection without an answer")
        default:
            SendFailure(exitCode: 56, message: "the transfer to \(target) failed: \(error)")
        }
    }

    private static func classify(_ error: NIOSSLError, target: String) -> SendFailure {
        let text = "\(error)"
        if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("certificate verify failed") {
            return SendFailure(
                exitCode: 60,
                message: "the certificate of \(target) is not trusted (give its CA with --cacert FILE, or --insecure)")
        }
        // BoringSSL's reasons read "…:OPENSSL_internal:WRONG_VERSION_NUMBER at file:line": keep the reasons.
        let reasons = text.components(separatedBy: "OPENSSL_internal:").dropFirst()
            .map { $0.prefix { $0 != " " && $0 != "]" && $0 != ")" } }
        let reason = reasons.isEmpty ? text : reasons.joined(separator: ", ")
        let hint = reasons.contains("WRONG_VERSION_NUMBER") ? " (is it an HTTPS server?)" : ""
        return SendFailure(exitCode: 35, message: "the TLS handshake with \(target) failed: \(reason)\(hint)")
    }

    private static func describe(_ error: any Error) -> String {
        guard let error = error as? IOError else { return "\(error)" }
        return String(cString: strerror(error.errnoCode)).lowercased()
    }
}
