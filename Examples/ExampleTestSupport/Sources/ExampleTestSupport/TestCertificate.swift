import Foundation

/// A self-signed certificate for `localhost` and 127.0.0.1 (P-256), made once a test process with openssl in a
/// folder of its own; nil without openssl. The examples' HTTP/2 and HTTPS tests serve it and trust it.
public let testCertificate: (cert: String, key: String)? = {
    guard let openssl = onPath("openssl") else { return nil }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("test-cert-\(UUID().uuidString)")
    guard (try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)) != nil else {
        return nil
    }
    let (cert, key) = (folder.appendingPathComponent("cert.pem").path, folder.appendingPathComponent("key.pem").path)
    let made = try? runWaiting(
        openssl,
        [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
            "-out", cert, "-days", "1", "-subj", "/CN=localhost", "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ])
    return made?.status == 0 ? (cert, key) : nil
}()
