import Foundation
import MultipartTestSupport
import NIOCore
import StreamingMultipart
import StreamingMultipartServer
import Testing

/// The slots of an upload server: a limit per address, and room made by cutting the slowest upload below the
/// protected rate after its grace, never one at or above it. The clock is given, so nothing here waits.
struct UploadAdmissionTests {
    let start = ContinuousClock.now

    func admission(_ uploads: Int, perPeer: Int = 8) -> UploadAdmission {
        UploadAdmission(
            .init(maxUploads: uploads, maxUploadsPerPeer: perPeer, protectedRate: 1000, grace: .seconds(10)))
    }

    @Test func oneAddressHoldsOnlyItsShare() throws {
        let admission = admission(10, perPeer: 2)
        let first = try admission.admit(peer: "10.0.0.1", now: start).get()
        _ = try admission.admit(peer: "10.0.0.1", now: start).get()
        #expect(throws: UploadAdmission.Refusal.tooManyFromPeer) {
            try admission.admit(peer: "10.0.0.1", now: start).get()
        }
        #expect(UploadAdmission.Refusal.tooManyFromPeer.status == 429)
        _ = try admission.admit(peer: "10.0.0.2", now: start).get()
        first.end()
        first.end()  // twice does nothing
        _ = try admission.admit(peer: "10.0.0.1", now: start).get()
        #expect(admission.count == 3)
    }

    /// What the examples answer a refused client: the status, a code and the limit, as the admission says them.
    @Test func aRefusalSaysItsStatusCodeAndLimit() {
        let admission = admission(10, perPeer: 2)
        let answers = [UploadAdmission.Refusal.busy, .tooManyFromPeer].map {
            "\($0.status) \($0.code): \(admission.message(for: $0))"
        }
        #expect(
            answers == [
                "503 busy: the server takes 10 uploads at once; try again shortly",
                "429 tooManyUploads: at most 2 uploads at once from one address",
            ])
    }

    /// A full server cuts the slowest upload below the protected rate for a new one, which is answered 503 (busy):
    /// the cut upload holds its slot until its ticket ends, after it let go of what it holds, so that never more
    /// than `maxUploads` uploads hold anything. Its retry then finds the slot free.
    @Test func theSlowestUploadBelowTheProtectedRateIsCutForANewOne() throws {
        let admission = admission(3)
        let cut = Locked<[Int]>([])
        var tickets: [UploadAdmission.Ticket] = []
        for (index, bytes) in [50_000, 5_000, 9_000].enumerated() {  // 5,000, 500 and 900 B/s after 10 s
            let ticket = try admission.admit(peer: "10.0.0.\(index)", now: start).get()
            ticket.received(bytes)
            ticket.whenCut { cut.update { $0.append(index) } }
            tickets.append(ticket)
        }
        #expect(throws: UploadAdmission.Refusal.busy, "none past its grace yet") {
            try admission.admit(peer: "10.0.1.1", now: start + .seconds(5)).get()
        }
        #expect(cut.get() == [])
        let later = start + .seconds(10)
        #expect(throws: UploadAdmission.Refusal.busy, "the cut slot is not free yet") {
            try admission.admit(peer: "10.0.1.1", now: later).get()
        }
        #expect(cut.get() == [1] && tickets[1].wasCut && admission.count == 3)
        #expect(throws: UploadAdmission.Refusal.busy, "no second cut while the first slot is given back") {
            try admission.admit(peer: "10.0.1.2", now: later).get()
        }
        #expect(cut.get() == [1])
        tickets[1].end()  // the cut upload let go of everything: its slot is free
        #expect(admission.count == 2)
        tickets[1] = try admission.admit(peer: "10.0.1.1", now: later).get()
        #expect(admission.count == 3)
        #expect(throws: UploadAdmission.Refusal.busy) { try admission.admit(peer: "10.0.1.2", now: later).get() }
        #expect(cut.get() == [1, 2])
        tickets[2].end()
        _ = try admission.admit(peer: "10.0.1.2", now: later).get()
        #expect(throws: UploadAdmission.Refusal.busy, "5,000 B/s is above the protected rate") {
            try admission.admit(peer: "10.0.1.3", now: later).get()
        }
        #expect(cut.get() == [1, 2] && admission.count == 3)
    }

    @Test func aHandlerSetAfterTheCutRunsAtOnce() throws {
        let admission = admission(1)
        let ticket = try admission.admit(peer: nil, now: start).get()
        _ = admission.admit(peer: nil, now: start + .seconds(11))
        let ran = Locked(false)
        ticket.whenCut { ran.set(true) }
        #expect(ran.get() && ticket.wasCut)
    }

    @Test func aCountedBodyCountsEveryByte() async throws {
        let admission = admission(1)
        let ticket = try admission.admit(peer: nil).get()
        let buffers = AsyncStream<ByteBuffer> { continuation in
            for size in [10, 0, 4096, 7] { continuation.yield(ByteBuffer(repeating: 1, count: size)) }
            continuation.finish()
        }
        var seen = 0
        for try await buffer in buffers.counted(by: ticket) { seen += buffer.readableBytes }
        #expect(seen == 4113 && ticket.receivedBytes == 4113)
    }

    /// Once its ticket is cut, a counted body throws at its next buffer: the upload's reading ends there.
    @Test func aCutBodyThrowsAtItsNextBuffer() async throws {
        let admission = admission(1)
        let ticket = try admission.admit(peer: nil, now: start).get()
        let buffers = AsyncStream<ByteBuffer> { continuation in
            for _ in 0..<3 { continuation.yield(ByteBuffer(repeating: 1, count: 10)) }
            continuation.finish()
        }
        var iterator = buffers.counted(by: ticket).makeAsyncIterator()
        #expect(try await iterator.next()?.readableBytes == 10)
        _ = admission.admit(peer: nil, now: start + .seconds(11))  // 10 bytes in 11 s: cut
        await #expect(throws: CancellationError.self) { _ = try await iterator.next() }
    }

    /// `ticket(for:)` throws the answer to send: 429 past an address's share, 503 when every slot is held.
    @Test func aRefusedTicketIsTheAnswerToSend() throws {
        let admission = admission(2, perPeer: 1)
        _ = try admission.ticket(for: "10.0.0.1")
        #expect {
            try admission.ticket(for: "10.0.0.1")
        } throws: { error in
            let answer = (error as? MultipartFormError)?.response
            return answer?.status == 429 && answer?.code == "tooManyUploads"
                && answer?.message == "at most 1 uploads at once from one address"
        }
        _ = try admission.ticket(for: "10.0.0.2")
        #expect {
            try admission.ticket(for: "10.0.0.3")
        } throws: { error in
            let failure = error as? MultipartFormError
            return failure?.response.status == 503 && failure?.retryAfterSeconds == 1
        }
    }

    /// A form whose upload is cut mid-body fails with `503 busy`, not the cancellation it saw, and leaves nothing.
    @Test func aFormCutMidBodyIsAnswered503Busy() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let admission = admission(1)
        let ticket = try admission.admit(peer: nil, now: start).get()
        var body = MultipartBody()
        try body.append(.data(Data(repeating: 1, count: 100_000), name: "f", filename: "f.bin"))
        let bytes = try body.bytes()
        let (buffers, continuation) = AsyncStream<ByteBuffer>.makeStream()
        continuation.yield(ByteBuffer(bytes: bytes.prefix(50_000)))
        continuation.yield(ByteBuffer(bytes: bytes.dropFirst(50_000)))
        continuation.finish()
        _ = admission.admit(peer: nil, now: start + .seconds(11))  // too slow: cut before the body is read
        let spooler = MultipartSpooler(directory: folder.url, limits: .untimed)
        await #expect {
            try await spooler.withDecodedForm(
                as: SpooledForm.self, buffers, contentType: body.contentType, countedBy: ticket
            ) { _ in }
        } throws: { error in
            let answer = (error as? MultipartFormError)?.response
            return answer?.status == 503 && answer?.code == "busy" && answer?.message == UploadAdmission.cutMessage
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty)
    }
}
