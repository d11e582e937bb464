extension ContinueGate {
    /// The gate's state as one value: each event is a mutating method that returns what the gate must do once its
    /// lock is let go (async-http-client's `Transaction+StateMachine` is the model), so a continuation is never
    /// resumed under the lock, and the table on ``ContinueGate`` is this type's `switch`es.
    struct StateMachine {
        private enum State {
            /// The upload registered the gate; no observer has seen its head yet.
            case registered
            /// The head went out; the body waits (`waiter`) until an answer or the timeout opens the gate.
            case headSent(waiter: CheckedContinuation<Opening, Never>?)
            /// A final answer of 300 or more came: the body waits for that answer's end.
            case refused(waiter: CheckedContinuation<Opening, Never>?)
            case open(Opening)
        }

        /// What opening the gate asks of it.
        enum OpenAction {
            case none
            /// Hand the opening to the body that waits.
            case resume(CheckedContinuation<Opening, Never>, Opening)
        }

        /// What the body's wait asks of it.
        enum WaitAction {
            /// The gate is open: go on at once.
            case resume(Opening)
            /// The gate holds the continuation until it opens.
            case park
        }

        private var state = State.registered
        private var interimAnswers = 0
        /// The `Location` of the request's `104 Upload Resumption Supported`, if one came.
        private(set) var resumeLocation: String?

        /// The request head went out on a watched connection.
        mutating func requestHeadSent() {
            if case .registered = state { state = .headSent(waiter: nil) }
        }

        /// An interim answer (1xx) came, with the resumption location it announced if any; returns whether to report
        /// it (the first ``ContinueGate/maxReportedInterimAnswers``).
        mutating func interimAnswer(announcing location: String?) -> Bool {
            if let location { resumeLocation = location }
            interimAnswers += 1
            return interimAnswers <= ContinueGate.maxReportedInterimAnswers
        }

        /// A final answer of 300 or more came: the body is not sent, and waits for the answer's end.
        mutating func refused() {
            if case .headSent(let waiter) = state { state = .refused(waiter: waiter) }
        }

        /// `opening` happened; a gate open already stays as it opened.
        mutating func open(_ opening: Opening) -> OpenAction {
            switch state {
            case .open:
                return .none
            case .registered:
                state = .open(opening)
                return .none
            case .headSent(let waiter), .refused(let waiter):
                state = .open(opening)
                return waiter.map { .resume($0, opening) } ?? .none
            }
        }

        /// The timeout passed: it opens a gate that waits for `100 Continue`, not one whose refusal is being answered.
        mutating func timeUp() -> OpenAction {
            guard case .headSent = state else { return .none }
            return open(.timedOut)
        }

        /// The body asks for its first buffer, with `continuation` to resume when the gate opens.
        mutating func wait(_ continuation: CheckedContinuation<Opening, Never>) -> WaitAction {
            switch state {
            case .registered:
                state = .open(.notWatched)
                return .resume(.notWatched)
            case .open(let opening):
                return .resume(opening)
            case .headSent:
                state = .headSent(waiter: continuation)
                return .park
            case .refused:
                state = .refused(waiter: continuation)
                return .park
            }
        }
    }
}
