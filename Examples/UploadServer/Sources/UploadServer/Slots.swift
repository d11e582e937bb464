import Foundation

/// How many connections may be open at once (see ``ConnectionLimit``); `uploadsFittingDescriptors()` sizes the
/// library's `UploadAdmission`: each upload holds a connection and a spool file, two descriptors, and a server that
/// runs out of descriptors stops answering anyone.
final class Slots: @unchecked Sendable {
    let limit: Int
    private let lock = NSLock()
    private var taken = 0  // guarded by `lock`

    init(limit: Int) { self.limit = max(1, limit) }

    /// Takes a slot; false when all are taken.
    func take() -> Bool {
        lock.withLock {
            guard taken < limit else { return false }
            taken += 1
            return true
        }
    }

    func give() { lock.withLock { taken -= 1 } }

    /// A limit on uploads that keeps them within this process's descriptors: three for each (its connection, its spool
    /// file, and one more for a connection still sending its headers), 64 kept for everything else.
    static func uploadsFittingDescriptors() -> Int {
        max(1, min(4096, (descriptorLimit() - 64) / 3))
    }

    /// This process's limit on open descriptors (`ulimit -n`).
    static func descriptorLimit() -> Int {
        var limits = rlimit()
        #if os(Linux)
        let resource = Int32(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limits) == 0 else { return 256 }
        return Int(min(limits.rlim_cur, 1 << 20))  // an unlimited limit is a huge number
    }
}
