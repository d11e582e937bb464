public import Foundation
import StreamingMultipartCrypto

/// Files for a test's forms, in a folder of their own removed after.
///
/// ```swift
/// let outbox = try Outbox()
/// defer { outbox.remove() }
/// let photo = try outbox.file("a.jpg", randomBytes(1 << 20, seed: 1))
/// ```
public struct Outbox: Sendable {
    public let url = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-\(UUID().uuidString)")

    public init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }

    /// Writes `bytes` to a file named `name` in the folder; its path.
    public func file(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = url.appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    public func remove() { try? FileManager.default.removeItem(at: url) }
}

/// `count` bytes that differ from seed to seed (a linear congruential generator's high bits), the same for a seed on
/// every run.
public func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt8(truncatingIfNeeded: state >> 33)
    }
}

/// Lower-case hex SHA-256: what both servers answer for a stored file.
public func sha256(_ bytes: [UInt8]) -> String {
    var digest = SHA256Digest()
    let whole = bytes[...]  // an ArraySlice's span is back-deployed; an Array's needs the 2025 systems
    digest.update(whole.span)
    return digest.finalize().map { String(format: "%02x", $0) }.joined()
}
