import Foundation

/// A `multipart/form-data` body (RFC 7578): a boundary and parts, composed now and produced only when read.
///
/// A body is a value. It holds text and data in memory, but files and streams only as a path or a closure, so
/// a body for a 10 GB file costs a few hundred bytes until it is read, and each read (``makeReader(compression:)``,
/// ``makeInputStream(compression:throttle:progress:)``, ``chunks(size:compression:throttle:progress:)``,
/// ``write(to:permissions:compression:)``) produces the whole body again, so a request can be retried.
///
/// ```swift
/// var body = MultipartBody()
/// try body.append(.text("Sunset over the bay", name: "caption"))
/// try body.append(.file(at: photoURL, name: "photo"))
///
/// request.setValue(body.contentType, forHTTPHeaderField: "Content-Type")
/// request.httpBodyStream = body.makeInputStream()
/// ```
///
/// The wire format: each part begins with `--boundary` CRLF and its header block; parts are separated by CRLF;
/// the body ends with CRLF `--boundary--` CRLF (RFC 2046 §5.1.1).
public struct MultipartBody: Sendable {
    /// The boundary between parts.
    public private(set) var boundary: MultipartBoundary
    /// The parts, in order.
    public internal(set) var parts: [MultipartPart] = []
    /// Whether the boundary was drawn here and so may be drawn again when an appended part contains it. A boundary
    /// the caller chose makes readers scan file and stream parts for it (``BoundaryWatch``).
    let boundaryIsRandom: Bool

    /// An empty body with a random boundary from the system's CSPRNG.
    public init() {
        boundary = .random()
        boundaryIsRandom = true
    }

    /// An empty body with a given boundary. A part that contains it is then rejected rather than redrawn.
    public init(boundary: MultipartBoundary) {
        self.boundary = boundary
        boundaryIsRandom = false
    }

    /// The `Content-Type` header value: `multipart/form-data; boundary=…`, the boundary quoted when it holds a
    /// character that a bare token cannot (RFC 2046 §5.1.1).
    public var contentType: String {
        let value = boundary.value
        let isToken = value.utf8.allSatisfy(MultipartHeaders.isTokenCharacter)
        return "multipart/form-data; boundary=" + (isToken ? value : "\"\(value)\"")
    }

    /// The exact byte count of the body, boundaries and headers included; nil when some part's length is unknown.
    public var contentLength: Int64? {
        var total = Int64(BodyLayout.closeDelimiter(boundary, afterParts: !parts.isEmpty).count)
        for (index, part) in parts.enumerated() {
            guard let length = part.content.length else { return nil }
            total += Int64(BodyLayout.headCount(of: part, at: index, boundary: boundary)) + length
        }
        return total
    }

    /// Whether every read produces the whole body again, so that a transport can retry the request or resend it
    /// after a 307 or 308 redirect: true unless a part is a ready-made, one-shot `InputStream`
    /// (``MultipartPart/stream(_:name:filename:contentType:length:)``).
    ///
    /// ```swift
    /// let retries = body.isReproducible ? 3 : 0
    /// ```
    public var isReproducible: Bool { parts.allSatisfy(\.content.isReproducible) }

    /// Appends a part.
    ///
    /// - Throws: ``MultipartError/Code/invalidHeader`` for a header name that is not a token or a value holding
    ///   CR, LF or NUL; ``MultipartError/Code/boundaryInContent`` when a custom boundary occurs in the part's
    ///   in-memory bytes (a random boundary is drawn again instead); ``MultipartError/Code/lengthMismatch`` for a
    ///   stream declared with a negative length.
    public mutating func append(_ part: MultipartPart) throws {
        try part.validateFormData(partIndex: parts.count)
        if let length = part.content.length, length < 0 {
            throw MultipartError(
                code: .lengthMismatch, message: "part \(parts.count + 1) declares a negative length (\(length) bytes)",
                partIndex: parts.count)
        }
        if part.contains(boundary) {
            guard boundaryIsRandom else {
                throw MultipartError(
                    code: .boundaryInContent,
                    message: "the boundary \(String(reflecting: boundary.value)) occurs inside the part's bytes",
                    partIndex: parts.count)
            }
            // Draw until no in-memory part holds the boundary; with 190 random bits, one draw in practice.
            repeat { boundary = .random() } while part.contains(boundary) || parts.contains { $0.contains(boundary) }
        }
        parts.append(part)
    }

    /// Appends parts in order; on an error, the parts before the failing one stay appended.
    public mutating func append(contentsOf parts: some Sequence<MultipartPart>) throws {
        for part in parts { try append(part) }
    }
}

extension MultipartPart {
    /// Whether `--boundary` occurs in this part's in-memory bytes (files and streams are not searched).
    func contains(_ boundary: MultipartBoundary) -> Bool {
        guard case .bytes(let data) = content.storage else { return false }
        let needle = boundary.dashBoundary
        return data.withSpan { haystack in needle.withSpan { ByteSearch.firstRange(of: $0, in: haystack) != nil } }
    }
}

/// The bytes around the parts' contents.
enum BodyLayout {
    /// The delimiter line and header block before part `index`: CRLF (except before the first part),
    /// `--boundary`, CRLF, the headers, and the empty line.
    static func head(of part: MultipartPart, at index: Int, boundary: MultipartBoundary) -> [UInt8] {
        var bytes: [UInt8] = index == 0 ? [] : [0x0D, 0x0A]
        bytes += boundary.dashBoundary
        bytes += [0x0D, 0x0A]
        bytes += part.headers.encoded
        return bytes
    }

    /// `head(of:at:boundary:).count`, counted without building the bytes.
    static func headCount(of part: MultipartPart, at index: Int, boundary: MultipartBoundary) -> Int {
        (index == 0 ? 0 : 2) + 2 + boundary.value.utf8.count + 2 + part.headers.encodedCount  // CRLF, --boundary CRLF
    }

    /// The close delimiter: CRLF `--boundary--` CRLF, without the first CRLF for a body with no parts.
    static func closeDelimiter(_ boundary: MultipartBoundary, afterParts: Bool) -> [UInt8] {
        (afterParts ? [0x0D, 0x0A] : []) + boundary.dashBoundary + Array("--\r\n".utf8)
    }
}
