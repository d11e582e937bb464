import Foundation
import NIOConcurrencyHelpers

/// Which uploads a server takes at once: a limit on all of them, a limit per client address, and, when every slot
/// is taken, room made by cutting the slowest upload that has run long enough and sends below a protected rate.
///
/// A server that only counts uploads is held by clients that send just above its minimum body rate: 64 of them at
/// 1.5 KiB/s each kept every other upload refused for as long as they kept sending. Production servers bound that
/// two ways, and this does both: one address may hold only ``Configuration/maxUploadsPerPeer`` slots (429), and
/// when the slots run short a new upload cuts the slowest one below ``Configuration/protectedRate`` after
/// ``Configuration/grace`` (that upload's ``Ticket/whenCut(_:)`` handlers run, and the server ends it with 503). An
/// upload at or above the protected rate is never cut.
///
/// A cut upload keeps its slot until its ticket ends, when it has let go of what it holds (its files, its
/// descriptors, its buffers), so no more than ``Configuration/maxUploads`` uploads ever hold anything: the new upload
/// that made the cut is answered 503 with `Retry-After: 1`, and its retry finds the slot free. A resumable upload's
/// body (`ResumableUploads`) fails the moment its ticket is cut, paused or not.
///
/// Framework-neutral: give it the client's address as a string, the bytes as they arrive, and end each ticket.
///
/// ```swift
/// let admission = UploadAdmission(.init(maxUploads: 64))
/// switch admission.admit(peer: remoteAddress) {
/// case .failure(let refusal): return refusal.status          // 503, or 429 for one address's too many
/// case .success(let ticket):
///     defer { ticket.end() }
///     // A cut makes the counted body throw at its next buffer: answer 503 when `ticket.wasCut`.
///     let form = try await spooler.spool(body.counted(by: ticket), contentType: contentType)
/// }
/// ```
public final class UploadAdmission: Sendable {
    /// The limits.
    public struct Configuration: Sendable, Hashable {
        /// The most uploads at once.
        public var maxUploads: Int
        /// The most uploads at once from one client address. Default 8.
        public var maxUploadsPerPeer: Int
        /// An upload whose average rate is at least this (bytes a second) is never cut to make room. Default
        /// 64 KiB/s: a phone on a poor link, well above the body timeout's usual minimum.
        public var protectedRate: Int
        /// How long an upload runs before its rate is judged; until then it is never cut. Default 10 s.
        public var grace: Duration

        public init(
            maxUploads: Int, maxUploadsPerPeer: Int = 8, protectedRate: Int = 64 << 10, grace: Duration = .seconds(10)
        ) {
            self.maxUploads = max(1, maxUploads)
            self.maxUploadsPerPeer = max(1, maxUploadsPerPeer)
            self.protectedRate = max(0, protectedRate)
            self.grace = grace
        }
    }

    /// Why an upload was not taken.
    public enum Refusal: Error, Sendable, Hashable {
        /// Every slot is held (one may have just been cut to make room): 503, try again after `Retry-After`.
        case busy
        /// This address holds its share of the slots: 429.
        case tooManyFromPeer

        /// The HTTP status to answer with (with `Retry-After`).
        public var status: Int { self == .busy ? 503 : 429 }

        /// A short name for an error body: `busy` or `tooManyUploads`.
        public var code: String { self == .busy ? "busy" : "tooManyUploads" }
    }

    /// What to tell a client `refusal` turned away (it names the limit, nothing else).
    public func message(for refusal: Refusal) -> String {
        switch refusal {
        case .busy: "the server takes \(configuration.maxUploads) uploads at once; try again shortly"
        case .tooManyFromPeer: "at most \(configuration.maxUploadsPerPeer) uploads at once from one address"
        }
    }

    /// What to tell a client whose upload was cut (``Ticket/wasCut``), answered with 503 and `Retry-After`.
    public static let cutMessage = "the server is full and this upload was among the slowest; try again"

    public let configuration: Configuration
    /// The tickets that hold a slot, and how many each address holds: they change together.
    private struct Slots {
        var holders: [ObjectIdentifier: Ticket] = [:]
        var perPeer: [String: Int] = [:]

        /// Gives a ticket's slot back.
        mutating func release(_ ticket: Ticket) {
            guard holders.removeValue(forKey: ObjectIdentifier(ticket)) != nil, let peer = ticket.peer else { return }
            perPeer[peer, default: 1] -= 1
            if perPeer[peer] == 0 { perPeer[peer] = nil }
        }
    }

    private let slots = NIOLockedValueBox(Slots())

    public init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    /// The uploads holding a slot now.
    public var count: Int { slots.withLockedValue { $0.holders.count } }

    /// Takes a slot for an upload from `peer` (nil when the address is not known: counted against no address). When
    /// every slot is held, cuts the slowest upload that may be cut and refuses this one (``Refusal/busy``): the cut
    /// upload's slot is free once its ticket ends, after it let go of what it holds.
    public func admit(peer: String?, now: ContinuousClock.Instant = .now) -> Result<Ticket, Refusal> {
        let (result, cutHandlers): (Result<Ticket, Refusal>, [@Sendable () -> Void]) = slots.withLockedValue {
            slots in
            if let peer, slots.perPeer[peer, default: 0] >= configuration.maxUploadsPerPeer {
                return (.failure(.tooManyFromPeer), [])
            }
            if slots.holders.count >= configuration.maxUploads {
                // A slot being given back counts as held: cut another only when none is. Marked cut here, under
                // the lock, so that two newcomers at once cut one upload, not two.
                guard !slots.holders.values.contains(where: \.wasCut) else { return (.failure(.busy), []) }
                return (.failure(.busy), slowestCuttable(among: slots.holders.values, now: now)?.markCut() ?? [])
            }
            let ticket = Ticket(admission: self, peer: peer, admitted: now)
            slots.holders[ObjectIdentifier(ticket)] = ticket
            if let peer { slots.perPeer[peer, default: 0] += 1 }
            return (.success(ticket), [])
        }
        for handler in cutHandlers { handler() }  // outside the lock: a handler may end the ticket
        // A ticket taken by a resumable upload's route ends its body when cut, paused or not.
        if case .success(let ticket) = result, let body = ResumableBody.beingRead { ticket.whenCut { body.cut() } }
        return result
    }

    /// The upload past its grace with the lowest average rate below the protected one.
    private func slowestCuttable(
        among holders: Dictionary<ObjectIdentifier, Ticket>.Values, now: ContinuousClock.Instant
    ) -> Ticket? {
        var slowest: (ticket: Ticket, rate: Double)?
        for ticket in holders {
            let elapsed = now - ticket.admitted
            guard elapsed >= configuration.grace else { continue }
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let rate = Double(ticket.receivedBytes) / max(seconds, 1e-3)
            if rate < Double(configuration.protectedRate), rate < slowest?.rate ?? .infinity {
                slowest = (ticket, rate)
            }
        }
        return slowest?.ticket
    }

    fileprivate func end(_ ticket: Ticket) {
        slots.withLockedValue { $0.release(ticket) }
    }

    /// One admitted upload: it counts the bytes received, may be cut to make room, and gives its slot back when
    /// ended (ending twice, or after a cut, does nothing).
    public final class Ticket: Sendable {
        fileprivate let peer: String?
        fileprivate let admitted: ContinuousClock.Instant
        private weak let admission: UploadAdmission?

        /// The bytes counted, and whether the upload was cut with the handlers to run when it is.
        private struct Progress {
            var received: Int64 = 0
            var isCut = false
            var onCut: [@Sendable () -> Void] = []
        }

        private let progress = NIOLockedValueBox(Progress())

        fileprivate init(admission: UploadAdmission, peer: String?, admitted: ContinuousClock.Instant) {
            self.admission = admission
            self.peer = peer
            self.admitted = admitted
        }

        /// The bytes counted so far.
        public var receivedBytes: Int64 { progress.withLockedValue { $0.received } }
        /// Whether the upload was cut to make room for another.
        public var wasCut: Bool { progress.withLockedValue { $0.isCut } }

        /// Counts `count` bytes of the body as received.
        public func received(_ count: Int) {
            progress.withLockedValue { $0.received += Int64(count) }
        }

        /// Runs `handler` when the upload is cut (at once if it already was): the server stops reading it there.
        /// Every handler given runs, in order.
        public func whenCut(_ handler: @escaping @Sendable () -> Void) {
            let now: Bool = progress.withLockedValue { progress in
                if progress.isCut { return true }
                progress.onCut.append(handler)
                return false
            }
            if now { handler() }
        }

        /// Marks the ticket cut and returns the handlers to run (outside the admission's lock).
        fileprivate func markCut() -> [@Sendable () -> Void] {
            progress.withLockedValue { progress in
                progress.isCut = true
                defer { progress.onCut = [] }
                return progress.onCut
            }
        }

        /// Gives the slot back.
        public func end() {
            admission?.end(self)
        }
    }
}
