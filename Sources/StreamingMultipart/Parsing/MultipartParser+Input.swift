extension MultipartParser.Engine {
    /// The rest of a chunk appended while the buffer still held bytes: a possible delimiter's start, or part of a
    /// header block.
    ///
    /// Appending the whole chunk to those bytes would copy it (the buffer's storage is an earlier chunk's, or a
    /// copy), and a body dense with delimiter near-misses leaves such a tail at almost every chunk's end. Instead
    /// the chunk's bytes go into the buffer a little at a time (``takePending()``), only as many as the state
    /// needs to move on, and once the buffer holds nothing but copies of the chunk's bytes, the next time the state
    /// needs input the buffer becomes a slice of the chunk again. A tail costs a copy of a few dozen bytes, not of a
    /// chunk. The buffer changes only there, when a state has asked for input, never under a state's feet.
    struct PendingChunk: Sendable {
        /// The chunk as appended.
        let chunk: Input
        /// The index in `chunk` of its first byte not yet in the buffer.
        var next: Int
        /// How many of the buffer's last bytes are copies of `chunk`'s bytes just before `next`.
        var copied = 0

        /// The bytes not yet in the buffer.
        var rest: Input { chunk[from: next] }
    }

    /// The fewest bytes of a pending chunk taken into the buffer at a time: enough to decide any delimiter that
    /// begins in a held tail (a line break, `--boundary`, ``maxTransportPadding`` blanks and a line break).
    var minimumTake: Int { scanner.dashBoundary.count + MultipartParser.maxTransportPadding + 8 }

    /// Moves the next bytes of the pending chunk into the buffer, when the state needs more input than the buffer
    /// holds; returns false when nothing is pending.
    ///
    /// Takes at least ``minimumTake`` bytes and at least as many as the buffer holds, so that a header block
    /// arriving in a long chunk is copied in doubling steps: the bytes copied stay under twice the block.
    mutating func takePending() -> Bool {
        guard var pending else { return false }
        if pending.copied >= buffer.count {  // everything held is the chunk's: read the chunk itself from there
            buffer = pending.chunk[from: pending.next - buffer.count]
            self.pending = nil
            return true
        }
        let take = max(minimumTake, buffer.count)
        guard pending.chunk.endIndex - pending.next > take else {
            joinPending()
            return true
        }
        buffer.append(contentsOf: pending.chunk[pending.next..<(pending.next + take)])
        pending.next += take
        pending.copied += take
        self.pending = pending
        return true
    }

    /// Moves the whole pending chunk into the buffer (a copy): for a caller that appends before ``next()`` returned
    /// nil, and at ``finish()``.
    mutating func joinPending() {
        guard let pending else { return }
        buffer.append(contentsOf: pending.rest)
        self.pending = nil
    }

    /// Drops all unread input, the pending chunk's too: the epilogue.
    mutating func skipInput() {
        bufferOffset = inputEnd
        buffer = Input()
        pending = nil
    }
}
