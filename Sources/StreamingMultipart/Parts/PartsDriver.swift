import Metrics

/// The parser and the source iterator that a parts sequence and its bodies share.
///
/// A class because the parts iterator and each part's body iterator pull from the same source; they are used from
/// one task, in order, like any async iterator. The generic half only pulls chunks; everything done per event
/// is in the non-generic ``PartsCursor``, so a caller in another module pays no unspecialized generic code per
/// part.
@usableFromInline
final class PartsDriver<Base: AsyncSequence> where Base.Element: MultipartChunk {
    /// The cursor, in a cell of its own: a stored property of a class would be checked for exclusive access at run
    /// time at every event (`swift_beginAccess`), which cost a tenth of the async layer's time per part on small
    /// fields.
    private let cursorCell: HeapCell<PartsCursor>
    private var iterator: Base.AsyncIterator
    private let readsEpilogue: Bool
    /// The body timeout each chunk is counted against, when there is one, and whether its clock was started.
    private let watchdog: BodyWatchdog?
    private var watchdogStarted = false
    /// The counter each chunk's bytes are added to, when the caller reports them (the spooler's bytes received).
    private let received: Counter?

    init(
        iterator: Base.AsyncIterator, parser: consuming DecompressingMultipartParser, readsEpilogue: Bool,
        watchdog: BodyWatchdog?, received: Counter? = nil
    ) {
        cursorCell = HeapCell(PartsCursor(parser: parser))
        self.iterator = iterator
        self.readsEpilogue = readsEpilogue
        self.watchdog = watchdog
        self.received = received
    }

    /// The cursor, for a reader of the parts' events that runs its own loop (the form decoder's collector).
    var cursor: PartsCursor {
        _read { yield cursorCell.value }
        _modify { yield &cursorCell.value }
    }

    /// Skips what is left of the open part, then the next part's head, as far as the chunks so far go.
    @usableFromInline
    func nextPartNow() throws -> PartsCursor.PartStep { try cursor.nextPart() }

    /// The next bytes of part `index`, as far as the chunks so far go.
    @usableFromInline
    func nextBodyBytesNow(ofPart index: Int) throws -> PartsCursor.BytesStep {
        try cursor.nextBodyBytes(ofPart: index)
    }

    /// After the close delimiter: reads the source to its end when asked to (`readsEpilogue`), where `finish()`
    /// checks the delimiter's line.
    @usableFromInline
    func finishParts(isolation actor: isolated (any Actor)?) async throws {
        guard readsEpilogue else { return }
        while try await pull(isolation: actor) {
            while try cursor.nextEvent() != nil {}
        }
    }

    /// Pulls the source's next chunk into the parser, or tells it the source ended; returns false once it has.
    @usableFromInline @discardableResult
    func pull(isolation actor: isolated (any Actor)?) async throws -> Bool {
        try Task.checkCancellation()
        guard !cursor.sourceEnded else { return false }
        if let watchdog, !watchdogStarted {
            watchdog.begin()
            watchdogStarted = true
        }
        if let chunk = try await iterator.nextChunk(isolation: actor) {
            let bytes = chunk.multipartBytes
            try watchdog?.received(bytes.count)
            received?.increment(by: bytes.count)
            try cursor.append(bytes)
            return true
        }
        // Sources such as AsyncStream end early when their task is cancelled: that is a cancellation, not a
        // truncated body.
        try Task.checkCancellation()
        try cursor.finish()
        return false
    }
}

/// Where a parts sequence is in the body: the parser, the part whose body is being read, and whether the end
/// came. Synchronous: it says ``Step/needsInput`` when the parser wants the next chunk.
///
/// Chunks that lend their storage (``MultipartBytes/init(lending:owner:)``) go to an engine over ``LentBytes``,
/// so that their bytes are read in place and come out as regions of them; array slices go to the parser. The first
/// chunk decides (a compressed body always takes the parser: it reads what it inflated); a chunk of the other kind
/// later is copied into the kind chosen.
@usableFromInline
struct PartsCursor: ~Copyable {
    private var parser: DecompressingMultipartParser
    /// The engine lent chunks go to, once the first chunk was lent (`readsLent`); nil while the parser reads the
    /// body. Tested through `readsLent`, and reached by `lent!` in place: comparing the optional with nil copies it.
    private var lent: MultipartParser.Engine<LentBytes>?
    private var readsLent = false
    /// Whether a chunk came, so the kind of engine is chosen.
    private var chose = false
    /// The part whose body is being read, until its `.partEnd`.
    private var openPart: Int?
    /// Whether `.end` came: no part follows.
    private var ended = false
    /// Whether the source ended (and the parser was told).
    private(set) var sourceEnded = false

    init(parser: consuming DecompressingMultipartParser) { self.parser = parser }

    @usableFromInline
    enum PartStep {
        case part(MultipartParser.PartHead)
        /// The close delimiter, just now.
        case end
        /// No more parts: the end came earlier, or the source ended.
        case none
        case needsInput
    }

    @usableFromInline
    enum BytesStep {
        case bytes(MultipartBytes)
        /// The part ended, or another part is open.
        case none
        case needsInput
    }

    mutating func append(_ bytes: MultipartBytes) throws {
        if !chose {
            chose = true
            if case .lent = bytes.storage, parser.encoding == .identity {
                let engine = parser.parser.engine
                var lent = MultipartParser.Engine<LentBytes>(
                    boundary: engine.boundary, limits: engine.limits, mode: engine.mode)
                lent.mixedFieldName = engine.mixedFieldName
                self.lent = lent
                readsLent = true
            }
        }
        if readsLent {
            switch bytes.storage {
            case .lent(let bytes): try lent!.append(bytes)
            case .array(let bytes): try lent!.append(LentBytes(copying: bytes))
            }
        } else {
            try parser.append(bytes.arraySlice)
        }
    }

    mutating func finish() throws {
        sourceEnded = true
        if readsLent { try lent!.finish() } else { try parser.finish() }
    }

    /// The next event of either engine, taken apart, or nil when it needs input.
    mutating func nextEvent() throws -> ParserEventShape? {
        if readsLent { return try lent!.next()?.shape }
        return try parser.next()?.shape
    }

    /// Skips the rest of the open part, then the next part's head.
    mutating func nextPart() throws -> PartStep {
        guard !ended else { return .none }
        // Each engine's events as they are: no event is copied into another type on the way (the parts loop runs
        // this for every event).
        if readsLent {
            while let event = try lent!.next() {
                if let step = partStep(event) { return step }
            }
        } else {
            while let event = try parser.next() {
                if let step = partStep(event) { return step }
            }
        }
        return sourceEnded ? .none : .needsInput
    }

    /// What `event` means while looking for the next part: nil to read on.
    @inline(__always)
    private mutating func partStep<Event: CursorEvent>(_ event: Event) -> PartStep? {
        switch event.shape {
        case .partHeaders(let head):
            openPart = head.index
            return .part(head)
        case .bodyBytes: return nil
        case .partEnd:
            openPart = nil
            return nil
        case .end:
            ended = true
            return .end
        }
    }

    /// The next bytes of part `index`.
    mutating func nextBodyBytes(ofPart index: Int) throws -> BytesStep {
        guard openPart == index else { return .none }
        if readsLent {
            if let event = try lent!.next() { return bytesStep(event, ofPart: index) }
        } else {
            if let event = try parser.next() { return bytesStep(event, ofPart: index) }
        }
        return sourceEnded ? .none : .needsInput
    }

    @inline(__always)
    private mutating func bytesStep<Event: CursorEvent>(_ event: Event, ofPart index: Int) -> BytesStep {
        switch event.shape {
        case .bodyBytes(let bytes): return .bytes(bytes)
        case .partEnd:
            openPart = nil
            return .none
        case .partHeaders, .end:
            preconditionFailure("the parser emitted \(event) inside part \(index)")
        }
    }
}
