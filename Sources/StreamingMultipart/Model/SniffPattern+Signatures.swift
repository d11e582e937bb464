/// The signatures of the MIME Sniffing standard that are steps rather than table rows (§6.2: MP4, WebM, MP3 without
/// ID3), and the SVG tag an XML document may hold. Each reads only inside the bytes it is given, where they are.
extension SniffPattern {
    /// An `ftyp` box that fits in `header` and names an `mp4` brand, major or compatible (§6.2.1).
    static func isMP4(_ header: Span<UInt8>) -> Bool {
        guard header.count >= 12 else { return false }
        let boxSize = (0..<4).reduce(0) { $0 << 8 | Int(header[$1]) }
        guard boxSize <= header.count, boxSize % 4 == 0, holds(header, "ftyp".utf8, at: 4) else { return false }
        func isMP4Brand(at index: Int) -> Bool { holds(header, "mp4".utf8, at: index) }
        if isMP4Brand(at: 8) { return true }
        // The compatible brands, after the major brand's version: each starts a 4-byte step inside the box.
        return stride(from: 16, to: boxSize, by: 4).contains(where: isMP4Brand)
    }

    /// An EBML header (1A 45 DF A3) with a DocType element (42 82) that says `webm` in its first 38 bytes (§6.2.2).
    static func isWebM(_ header: Span<UInt8>) -> Bool {
        guard holds(header, [0x1A, 0x45, 0xDF, 0xA3], at: 0) else { return false }
        var index = 4
        while index + 1 < header.count, index < 38 {
            defer { index += 1 }
            guard header[index] == 0x42, header[index + 1] == 0x82 else { continue }
            // The element's size, a variable-length integer: as many bytes as its first byte's leading zero bits
            // plus one, at most 8.
            let sizeStart = index + 2
            guard sizeStart < header.count else { return false }
            let sizeLength = min(header[sizeStart].leadingZeroBitCount + 1, 8)
            var value = sizeStart + sizeLength
            // The DocType itself, after any padding NULs.
            while value < header.count, header[value] == 0 { value += 1 }
            if holds(header, "webm".utf8, at: value) { return true }
        }
        return false
    }

    /// Two MPEG audio Layer III frame headers, the second where the first frame ends (§6.2.3, with the frame size
    /// from the MPEG tables: the standard's steps swap the versions' tables and test a length backwards).
    static func isMP3WithoutID3(_ header: Span<UInt8>) -> Bool {
        guard let size = mp3FrameSize(header, at: 0), size >= 4 else { return false }
        return mp3FrameSize(header, at: size) != nil
    }

    /// The size of the Layer III frame whose header starts at `offset`, or nil for no valid header there.
    static func mp3FrameSize(_ header: Span<UInt8>, at offset: Int) -> Int? {
        guard offset >= 0, header.count - offset >= 4 else { return nil }
        let sync = header[offset]
        let flags = header[offset + 1]
        let rates = header[offset + 2]
        // 11 sync bits; the version (00 MPEG 2.5, 10 MPEG 2, 11 MPEG 1; 01 reserved); the layer (01: Layer III).
        let version = (flags >> 3) & 0x03
        guard sync == 0xFF, flags & 0xE0 == 0xE0, version != 1, (flags >> 1) & 0x03 == 1 else { return nil }
        let bitRateIndex = Int(rates >> 4)
        let sampleRateIndex = Int((rates >> 2) & 0x03)
        guard bitRateIndex != 0, bitRateIndex != 15, sampleRateIndex != 3 else { return nil }
        let isMPEG1 = version == 3
        let kilobits =
            isMPEG1
            ? [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320][bitRateIndex]
            : [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160][bitRateIndex]
        let sampleRate = [44_100, 48_000, 32_000][sampleRateIndex] >> (version == 3 ? 0 : version == 2 ? 1 : 2)
        let padding = Int((rates >> 1) & 0x01)
        return (isMPEG1 ? 144 : 72) * kilobits * 1000 / sampleRate + padding
    }

    /// Whether an XML document's header holds an `<svg` tag (any case; `<svg:svg` too): the root of an SVG image
    /// after its prolog, doctype or comments.
    static func holdsSVGTag(_ header: Span<UInt8>) -> Bool {
        let tag = "<SVG".utf8
        guard header.count > tag.count else { return false }
        for start in 0..<(header.count - tag.count) where header[start] == UInt8(ascii: "<") {
            let name = zip(tag.indices.dropFirst(), (start + 1)...)
            guard name.allSatisfy({ header[$1] & 0xDF == tag[$0] }) else { continue }
            let after = header[start + tag.count]
            if svgTagEnds.contains(after) || after == UInt8(ascii: ":") { return true }
        }
        return false
    }

    /// Whether `header` holds `bytes` at `offset`, all of them inside it.
    static func holds(_ header: Span<UInt8>, _ bytes: some Collection<UInt8>, at offset: Int) -> Bool {
        guard offset >= 0, header.count - offset >= bytes.count else { return false }
        return zip(bytes, offset...).allSatisfy { header[$1] == $0 }
    }
}
