/// The boundary that separates the parts of a multipart body (RFC 2046 §5.1.1).
///
/// A boundary is 1 to 70 characters from RFC 2046's `bchars` (letters, digits and `'()+_,-./:=?` and space), and
/// does not end in a space. ``random()`` draws one from the system's cryptographically secure generator, so that
/// no part's content can be crafted to contain it.
///
/// ```swift
/// let boundary = MultipartBoundary.random()          // "StreamingMultipart-Xk3…" (50 characters)
/// let custom = try MultipartBoundary("my-boundary")  // validated
/// ```
public struct MultipartBoundary: Sendable, Hashable, CustomStringConvertible {
    /// The longest boundary RFC 2046 allows, and so the longest this package generates or accepts to build with.
    public static let maximumLength = 70

    /// The boundary's characters, without the leading `--`.
    public let value: String

    /// Validates a boundary.
    ///
    /// - Parameter value: the boundary, without the leading `--`.
    /// - Throws: ``MultipartError/Code/invalidBoundary`` when it is empty, longer than 70 characters, ends in a
    ///   space, or holds a character outside RFC 2046's `bchars`.
    public init(_ value: String) throws {
        let bytes = Array(value.utf8)
        guard !bytes.isEmpty, bytes.count <= Self.maximumLength else {
            throw MultipartError(
                code: .invalidBoundary,
                message: "a boundary must be 1 to \(Self.maximumLength) characters long, got \(bytes.count)")
        }
        if let index = bytes.firstIndex(where: { !Self.isBoundaryCharacter($0) }) {
            throw MultipartError(
                code: .invalidBoundary,
                message:
                    "boundary character \(index) (byte 0x\(String(bytes[index], radix: 16))) is not allowed by RFC 2046"
            )
        }
        guard bytes.last != UInt8(ascii: " ") else {
            throw MultipartError(code: .invalidBoundary, message: "a boundary must not end in a space (RFC 2046)")
        }
        self.value = value
    }

    init(unchecked value: String) { self.value = value }

    /// A new boundary: `StreamingMultipart-` and 32 random letters and digits (about 190 bits) from the system's
    /// CSPRNG (`getrandom` on Linux, `arc4random` on Apple platforms).
    public static func random() -> MultipartBoundary {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// A new boundary drawn from `generator`; tests pass a seeded generator to get a known one.
    public static func random(using generator: inout some RandomNumberGenerator) -> MultipartBoundary {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        var bytes = Array("StreamingMultipart-".utf8)
        for _ in 0..<32 { bytes.append(alphabet.randomElement(using: &generator)!) }
        return MultipartBoundary(unchecked: String(decoding: bytes, as: UTF8.self))
    }

    public var description: String { value }

    /// `--` and the boundary: the delimiter that begins each part and, with `--` after it, ends the body.
    var dashBoundary: [UInt8] { Array("--\(value)".utf8) }

    /// RFC 2046 §5.1.1 `bchars := bcharsnospace / " "`.
    static func isBoundaryCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "a")...UInt8(ascii: "z"):
            return true
        default:
            return "'()+_,-./:=? ".utf8.contains(byte)
        }
    }
}
