#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds `--boundary` in contiguous bytes: the one hot loop of the parser.
///
/// Two searches share one loop. Inside a body, ``firstLineMatch(in:from:)`` finds `--boundary` right after a CR or
/// an LF, the places where some reader of the body sees a delimiter line (a CRLF, a bare LF, a bare CR); the parser
/// decides which of them it reads as one. In a preamble, ``firstMatch(in:from:)`` finds it anywhere, since one
/// reader (Werkzeug) takes a boundary in the middle of a preamble line for the first delimiter.
///
/// The search compares 16 positions at a time: one vector load for the match's first byte at each position and
/// one for its last byte further on (W. Muła's "SIMD-friendly" substring search). Only positions where both match
/// are checked in full with `memcmp`. Random data gives a candidate about once per 64 KiB, and CR/LF-dense or
/// boundary-prefix-dense data still takes one vector step per 16 bytes, so the scan is linear in every case.
/// Unsafe pointers stay inside the closures that lend them.
struct BoundaryScanner: Sendable {
    /// `--boundary`. A boundary holds no CR or LF (RFC 2046 §5.1.1), so neither occurs in it.
    let dashBoundary: [UInt8]

    init(dashBoundary: [UInt8]) {
        precondition(dashBoundary.count >= 3 && !dashBoundary.contains(0x0D) && !dashBoundary.contains(0x0A))
        self.dashBoundary = dashBoundary
    }

    /// The offset of the first CR or LF at or after `start` that `--boundary` follows, or nil.
    ///
    /// A match that every reader of a body takes for data is stepped over: `--boundary` followed by a byte no
    /// delimiter has there (not `-`, a blank, CR or LF) after a bare CR or LF, and after a CRLF too when
    /// `longerLinesAreData`. Hostile input can hold such lines densely, and returning each one to the parser
    /// cost six times the scan.
    func firstLineMatch(in bytes: Span<UInt8>, from start: Int, longerLinesAreData: Bool) -> Int? {
        bytes.withUnsafeBytes { buffer in
            search(buffer, from: start, afterLineBreak: true) { match in
                let next = match &+ 1 &+ dashBoundary.count
                guard next < buffer.count, Self.isOrdinary(buffer[next]) else { return true }
                let afterCRLF = buffer[match] == 0x0A && match > 0 && buffer[match &- 1] == 0x0D
                return afterCRLF && !longerLinesAreData
            }
        }
    }

    /// Whether `byte` cannot follow `--boundary` in a delimiter line: not `-`, a space, a tab, CR or LF.
    @inline(__always)
    private static func isOrdinary(_ byte: UInt8) -> Bool {
        byte != UInt8(ascii: "-") && byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t") && byte != 0x0D
            && byte != 0x0A
    }

    /// The offset of the first `--boundary` at or after `start`, or nil.
    func firstMatch(in bytes: RawSpan, from start: Int) -> Int? {
        bytes.withUnsafeBytes { search($0, from: start, afterLineBreak: false) { _ in true } }
    }

    /// ``firstMatch(in:from:)-(RawSpan,_)`` over typed bytes.
    func firstMatch(in bytes: Span<UInt8>, from start: Int) -> Int? {
        bytes.withUnsafeBytes { search($0, from: start, afterLineBreak: false) { _ in true } }
    }

    /// The shared loop: with `afterLineBreak`, a match is a CR or LF followed by `--boundary`, and the offset is
    /// that of the line break. Returns the first match that `accept` takes; the others are stepped over where they
    /// are found, without restarting the scan. `accept` is asked before the full comparison, about any candidate
    /// position, so it reads only bytes whose offsets it checks.
    @inline(__always)
    private func search(
        _ buffer: UnsafeRawBufferPointer, from start: Int, afterLineBreak: Bool, accept: (Int) -> Bool
    ) -> Int? {
        let count = dashBoundary.count &+ (afterLineBreak ? 1 : 0)
        guard let base = buffer.baseAddress, buffer.count &- start >= count else { return nil }
        let dash = SIMD16<UInt8>(repeating: UInt8(ascii: "-"))
        let carriageReturn = SIMD16<UInt8>(repeating: 0x0D)
        let lineFeed = SIMD16<UInt8>(repeating: 0x0A)
        let last = SIMD16<UInt8>(repeating: dashBoundary[dashBoundary.count &- 1])
        let tailOffset = count &- 1
        // The vector loop reads 16 bytes at position + tailOffset: it runs while that stays inside the buffer.
        let vectorLimit = buffer.count &- tailOffset &- 16
        var position = start
        while position <= vectorLimit {
            // 64 positions a vector at a time, each candidate checked in full: first the 64 at `start`, where a
            // small part's delimiter often is, then those where the step below saw a candidate.
            let blockEnd = position &+ 64
            while position <= vectorLimit, position < blockEnd {
                let heads = base.loadUnaligned(fromByteOffset: position, as: SIMD16<UInt8>.self)
                let tails = base.loadUnaligned(fromByteOffset: position &+ tailOffset, as: SIMD16<UInt8>.self)
                let firsts = afterLineBreak ? (heads .== carriageReturn) .| (heads .== lineFeed) : heads .== dash
                let candidates = firsts .& (tails .== last)
                if any(candidates) {
                    var bits = ByteSearch.laneBits(candidates)
                    while bits != 0 {
                        let candidate = position &+ bits.trailingZeroBitCount
                        if accept(candidate), matches(base + candidate, afterLineBreak) { return candidate }
                        bits &= bits &- 1
                    }
                }
                position &+= 16
            }
            // Four vectors a step while none holds a candidate, as random data nearly never does: one branch for
            // 64 positions.
            while position &+ 48 <= vectorLimit {
                var some = SIMDMask<SIMD16<Int8>>(repeating: false)
                for block in 0..<4 {
                    let offset = position &+ block &* 16
                    let heads = base.loadUnaligned(fromByteOffset: offset, as: SIMD16<UInt8>.self)
                    let tails = base.loadUnaligned(fromByteOffset: offset &+ tailOffset, as: SIMD16<UInt8>.self)
                    let firsts = afterLineBreak ? (heads .== carriageReturn) .| (heads .== lineFeed) : heads .== dash
                    some .|= firsts .& (tails .== last)
                }
                if any(some) { break }
                position &+= 64
            }
        }
        // The last few positions, one at a time.
        while position &+ count <= buffer.count {
            let byte = base.load(fromByteOffset: position, as: UInt8.self)
            let first = afterLineBreak ? byte == 0x0D || byte == 0x0A : byte == UInt8(ascii: "-")
            if first, accept(position), matches(base + position, afterLineBreak) { return position }
            position &+= 1
        }
        return nil
    }

    @inline(__always)
    private func matches(_ candidate: UnsafeRawPointer, _ afterLineBreak: Bool) -> Bool {
        dashBoundary.withUnsafeBytes {
            memcmp(afterLineBreak ? candidate + 1 : candidate, $0.baseAddress!, $0.count) == 0
        }
    }

    /// Where the longest suffix of `buffer[start...]` that is a CR or LF and a proper prefix of `--boundary` begins,
    /// or nil: bytes before it cannot belong to a line-break match that the next chunk completes.
    ///
    /// `--boundary` holds no CR or LF, so only the last CR or LF in the final `dashBoundary.count` bytes can begin
    /// such a suffix.
    func partialLineMatchStart(in bytes: Span<UInt8>, from start: Int) -> Int? {
        bytes.withUnsafeBytes { partialLineMatchStart(in: $0, from: start) }
    }

    private func partialLineMatchStart(in buffer: UnsafeRawBufferPointer, from start: Int) -> Int? {
        let windowStart = max(start, buffer.count - dashBoundary.count)
        var position = buffer.count - 1
        while position >= windowStart {
            if buffer[position] == 0x0D || buffer[position] == 0x0A {
                let length = buffer.count - position - 1
                return dashBoundary.withUnsafeBytes {
                    memcmp(buffer.baseAddress! + position + 1, $0.baseAddress!, length) == 0
                }
                    ? position : nil
            }
            position -= 1
        }
        return nil
    }
}
