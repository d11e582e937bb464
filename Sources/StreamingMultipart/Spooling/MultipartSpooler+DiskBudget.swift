import Metrics

extension MultipartSpooler {
    /// Bytes on disk that all the forms of one spooler may hold together, however many uploads run at once.
    ///
    /// ``Limits/maxDiskBytes`` bounds one form; a server that takes many uploads at a time needs a bound on their
    /// sum too, or a few gzip bodies that inflate a hundredfold fill its disk. A budget is a reference, shared by
    /// every copy of the spooler it is given to: bytes are taken from it as they are written, and given back when a
    /// file is removed (by ``SpooledForm/removeFiles()``, at the end of `withSpooledForm`, or when the form goes
    /// away) or moved out of the spool. A write that would pass it fails the upload with
    /// ``MultipartError/Code/insufficientStorage`` (HTTP 507) and removes the form's files.
    ///
    /// ```swift
    /// let spooler = MultipartSpooler(directory: "/var/spool/uploads", diskBudget: .init(bytes: 20 << 30))
    /// ```
    public final class DiskBudget: Sendable {
        /// The most bytes all forms may hold on disk at once.
        public let bytes: Int64
        private let used = LockedValue<Int64>(0)
        /// ``MultipartMetrics/diskBudgetInUse``, made with the factory in effect when the budget is made.
        private let inUse = Meter(label: MultipartMetrics.diskBudgetInUse)

        /// A budget of `bytes` (at least 1).
        public init(bytes: Int64) {
            self.bytes = max(1, bytes)
        }

        /// The bytes held now by files being written or spooled and not yet removed.
        public var usedBytes: Int64 { used.withLock { $0 } }

        /// Takes `count` bytes, unless that would pass the budget.
        func reserve(_ count: Int64) -> Bool {
            let taken = used.withLock { used in
                guard used + count <= bytes else { return false }
                used += count
                return true
            }
            if taken { inUse.add(count) }
            return taken
        }

        /// Gives `count` bytes back.
        func release(_ count: Int64) {
            guard count > 0 else { return }
            let given = used.withLock { used in
                defer { used = max(0, used - count) }
                return min(used, count)
            }
            inUse.add(-given)
        }
    }
}
