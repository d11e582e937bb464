/// An event of either of the parser's engines taken apart, its body bytes as ``MultipartBytes``: what
/// ``PartsCursor`` reads, whichever engine the body's chunks chose.
package enum ParserEventShape {
    case partHeaders(MultipartParser.PartHead)
    case bodyBytes(MultipartBytes)
    case partEnd
    case end
}

/// An engine's event, as ``PartsCursor`` (and the package's tests) read it. Inlined into the cursor's loops, specialized for each engine's
/// event type: no event is copied into another type on the way.
package protocol CursorEvent {
    var shape: ParserEventShape { get }
}

extension MultipartParser.Event: CursorEvent {
    package var shape: ParserEventShape {
        @inline(__always) get {
            switch self {
            case .partHeaders(let head): .partHeaders(head)
            case .bodyBytes(let bytes): .bodyBytes(MultipartBytes(bytes))
            case .partEnd: .partEnd
            case .end: .end
            }
        }
    }
}

extension LentBytes.Event: CursorEvent {
    package var shape: ParserEventShape {
        @inline(__always) get {
            switch self {
            case .partHeaders(let head): .partHeaders(head)
            case .bodyBytes(let bytes): .bodyBytes(MultipartBytes(bytes))
            case .partEnd: .partEnd
            case .end: .end
            }
        }
    }
}
