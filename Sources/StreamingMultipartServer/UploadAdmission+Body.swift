public import NIOCore

extension AsyncSequence where Element == ByteBuffer {
    /// The same buffers, each counted by `ticket` as it passes, so that the admission knows the upload's rate; once
    /// the ticket is cut, the next buffer throws `CancellationError` instead, which ends the upload's reading there.
    ///
    /// ```swift
    /// let form = try await spooler.spool(request.body.counted(by: ticket), contentType: contentType)
    /// ```
    public func counted(by ticket: UploadAdmission.Ticket) -> UploadAdmission.CountedBody<Self> {
        UploadAdmission.CountedBody(base: self, ticket: ticket)
    }
}

extension UploadAdmission {
    /// A body whose buffers an ``UploadAdmission/Ticket`` counts: `counted(by:)`.
    public struct CountedBody<Base: AsyncSequence>: AsyncSequence where Base.Element == ByteBuffer {
        public typealias Element = ByteBuffer
        let base: Base
        let ticket: Ticket

        public struct AsyncIterator: AsyncIteratorProtocol {
            var base: Base.AsyncIterator
            let ticket: Ticket

            public mutating func next() async throws -> ByteBuffer? {
                if ticket.wasCut { throw CancellationError() }
                guard let buffer = try await base.next() else { return nil }
                if ticket.wasCut { throw CancellationError() }
                ticket.received(buffer.readableBytes)
                return buffer
            }
        }

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(base: base.makeAsyncIterator(), ticket: ticket)
        }
    }
}

extension UploadAdmission.CountedBody: Sendable where Base: Sendable {}
