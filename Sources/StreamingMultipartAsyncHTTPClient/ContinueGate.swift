import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import StreamingMultipart
import StreamingMultipartUploadClient

/// One attempt's wait for `100 Continue`: the body's first buffer is held until the gate opens, as curl holds a
/// body sent with `Expect: 100-continue` (RFC 9110 §10.1.1). The gate only delays that buffer: the bytes are the
/// same whichever way it opens.
///
/// States, one ``StateMachine`` value in a lock box:
///
/// | event | registered | head sent | refused (a final answer of 300 or more) | open |
/// |---|---|---|---|---|
/// | the observer wrote the request head | head sent | | | |
/// | `100 Continue` | | open: continued | | |
/// | another 1xx | | reported | | |
/// | a final answer below 300 | | open: answered | | |
/// | a final answer of 300 or more | | refused | | |
/// | that answer's end, or the connection closed | | open: ended | open: ended | |
/// | the timeout | | open: timed out | stays refused | |
/// | the body asks for its first buffer | open: not watched | waits | waits | goes on |
///
/// "Not watched": no observer saw the head, so nothing will come to wait for. A refused request waits for its
/// answer's end, when AsyncHTTPClient has finished the request; the body then ends without a byte produced, and
/// none of it is sent, as with curl.
final class ContinueGate: Sendable {
    /// Why the gate opened.
    enum Opening: Equatable, Sendable {
        /// `100 Continue` arrived.
        case continued
        /// A final answer below 300 arrived first: the server takes the body without waiting for it.
        case answered
        /// The request is over before its body: a refusal's answer ended, or the connection closed.
        case ended
        /// No interim answer within the timeout.
        case timedOut
        /// No observer saw the request head: the client was not set up with `enableInterimResponses()`, or the
        /// request went over HTTP/2.
        case notWatched
    }

    /// The most interim answers reported for one request: a server may send any number of them.
    static let maxReportedInterimAnswers = 100

    private let state = NIOLockedValueBox(StateMachine())
    private let onInterim: @Sendable (HTTPResponseHead) -> Void
    /// The interop version the request offered: a `104` of another is no announcement.
    private let interopVersion: String

    /// - Parameters:
    ///   - interopVersion: the resumable uploads' interop version the request offers, if it offers resumption.
    ///   - onInterim: called with each interim answer (1xx) of the request, on the connection's event loop, up to
    ///     ``maxReportedInterimAnswers``.
    init(
        interopVersion: String = ResumableUpload.interopVersion,
        onInterim: @escaping @Sendable (HTTPResponseHead) -> Void
    ) {
        self.interopVersion = interopVersion
        self.onInterim = onInterim
    }

    /// Whether a request with these headers has a gate: it says `Expect: 100-continue`, or it offers resumption
    /// (its interim answers tell where to resume).
    static func isWatched(_ headers: HTTPHeaders) -> Bool {
        headers["Expect"].contains { $0.lowercased() == "100-continue" }
            || headers.contains(name: "Upload-Draft-Interop-Version")
    }

    /// Whether the body of a request with these headers waits for `100 Continue`.
    static func holdsBody(_ headers: HTTPHeaders) -> Bool {
        headers["Expect"].contains { $0.lowercased() == "100-continue" }
    }

    // MARK: The connection's side (its event loop)

    /// The request head went out on a watched connection.
    func requestHeadSent() {
        state.withLockedValue { $0.requestHeadSent() }
    }

    /// A response head arrived for the request.
    func received(_ head: HTTPResponseHead) {
        switch head.status.code {
        case 100..<200:
            // A 104 of an interop version this client does not speak is ignored, as the draft asks: its location
            // would be resumed by another version's rules.
            let announces =
                head.status.code == ResumableUpload.announcementStatus
                && head.headers.first(name: "Upload-Draft-Interop-Version") == interopVersion
            let location = announces ? head.headers.first(name: "Location") : nil
            if state.withLockedValue({ $0.interimAnswer(announcing: location) }) { onInterim(head) }
            if head.status.code == 100 { open(.continued) }
        case 200..<300:
            open(.answered)
        default:
            state.withLockedValue { $0.refused() }
        }
    }

    /// The `Location` of the request's `104 Upload Resumption Supported`, if one came: where to resume it.
    var resumeLocation: String? { state.withLockedValue { $0.resumeLocation } }

    /// The answer ended, or the connection closed, and AsyncHTTPClient knows: nothing more can come for this request.
    func finished() { open(.ended) }

    // MARK: The body's side

    /// Waits until the gate opens, at most `timeout` unless a refusal is being answered.
    func wait(upTo timeout: Duration) async -> Opening {
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            self?.timeUp()
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            switch state.withLockedValue({ $0.wait(continuation) }) {
            case .resume(let opening): continuation.resume(returning: opening)
            case .park: break
            }
        }
    }

    private func timeUp() {
        run(state.withLockedValue { $0.timeUp() })
    }

    private func open(_ opening: Opening) {
        run(state.withLockedValue { $0.open(opening) })
    }

    private func run(_ action: StateMachine.OpenAction) {
        switch action {
        case .none: break
        case .resume(let waiter, let opening): waiter.resume(returning: opening)
        }
    }
}

/// The gates of the attempts under way, each under a token of its own that its request carries in
/// ``attemptHeader``: the connection's observer claims the gate by the token and takes the header out before the
/// head is written, so the server never sees it. A value two requests can share (the `Content-Type`, whose boundary
/// is the body's: one body sent twice at once) would let one request's `104` and its location, the upload's only
/// credential, reach the other.
final class ContinueGates: Sendable {
    static let shared = ContinueGates()
    /// The header that carries a watched request's token from the upload to the connection's observer. On a client
    /// without `enableInterimResponses()` no observer removes it, and the server sees a random value.
    static let attemptHeader = "Multipart-Upload-Attempt"
    private let gates = NIOLockedValueBox<[String: ContinueGate]>([:])

    /// Registers `gate` under a new random token, which its request carries in ``attemptHeader`` until `remove`.
    func register(_ gate: ContinueGate) -> String {
        var random = SystemRandomNumberGenerator()
        let token = (0..<2).map { _ in String(random.next() as UInt64, radix: 16) }.joined(separator: "-")
        gates.withLockedValue { $0[token] = gate }
        return token
    }

    func remove(_ token: String) {
        _ = gates.withLockedValue { $0.removeValue(forKey: token) }
    }

    /// The gate of the request whose head carries `token`, marked as sent; nil for a token no upload waits on. A
    /// token is claimed once: a second head with it (a copy) gets nil.
    func claim(_ token: String) -> ContinueGate? {
        let gate = gates.withLockedValue { $0.removeValue(forKey: token) }
        gate?.requestHeadSent()
        return gate
    }
}

/// A body's buffers whose first waits for its ``ContinueGate``.
struct HeldBuffers<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == ByteBuffer {
    typealias Element = ByteBuffer

    let base: Base
    let gate: ContinueGate
    let timeout: Duration

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), gate: gate, timeout: timeout)
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        var gate: ContinueGate?
        let timeout: Duration

        mutating func next() async throws -> ByteBuffer? {
            if let gate {
                self.gate = nil
                // Over before the body: AsyncHTTPClient takes no more of it, so none is read.
                if await gate.wait(upTo: timeout) == .ended { return nil }
            }
            return try await base.next()
        }
    }
}
