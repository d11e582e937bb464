import CZlib

/// The three wrappings of deflate data that HTTP bodies use. Internal: users name an encoding with
/// ``ContentEncoding`` or ``MultipartBody/Compression``, where `deflate` means HTTP's (zlib-wrapped).
enum CompressionFormat: Sendable, Hashable {
    /// gzip (RFC 1952): `Content-Encoding: gzip` or `x-gzip`. A body may hold several members one after another.
    case gzip
    /// zlib (RFC 1950): `Content-Encoding: deflate` as RFC 9110 §8.4.1.2 defines it.
    case zlib
    /// Raw deflate (RFC 1951), with no wrapper: what some clients send as `Content-Encoding: deflate`. Not HTTP's
    /// `deflate`, which is ``zlib``.
    case rawDeflate

    /// zlib's `windowBits` for the format: 15 for a 32 KiB window, +16 for a gzip wrapper, negated for none.
    var windowBits: Int32 {
        switch self {
        case .gzip: 15 + 16
        case .zlib: 15
        case .rawDeflate: -15
        }
    }
}

extension ZlibStream {
    /// A zlib stream for `format`.
    ///
    /// - Throws: ``MultipartError/Code/compressionFailed`` when zlib cannot start (no memory, a bad level).
    init(_ direction: Direction, format: CompressionFormat, level: Int32 = Z_DEFAULT_COMPRESSION) throws {
        do {
            try self.init(direction, windowBits: format.windowBits, level: level)
        } catch {
            throw MultipartError(code: .compressionFailed, message: "zlib could not start (\(error.description))")
        }
    }

    /// Starts the stream over for `format`.
    func reset(format: CompressionFormat) { reset(windowBits: format.windowBits) }
}
