import Crypto
import Foundation
import NIOCore
import StreamingMultipart

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One part's bytes, in memory mapped for it alone (`mmap`) and unmapped when its last reference goes, so that a
/// part's memory goes back to the system at once rather than staying in the process's heap.
///
/// Why not a `ByteBuffer`: glibc's `malloc` serves a block past its mmap threshold from `mmap` only until the first
/// such block is freed; it then raises the threshold, and later 8 MiB blocks come from per-thread heaps that keep
/// freed memory resident. Parts allocated that way took a 1 GiB upload's peak RSS 22–38 MiB past
/// `partSize × (concurrency + 1)` (RESULTS.md). A part's bytes are sent in small copies (``chunk(from:maxLength:)``),
/// so AsyncHTTPClient never holds the buffer itself, and a part's buffer is free for the next part as soon as its
/// request is done (``S3Upload`` checks that it is the only reference before reusing it).
///
/// `@unchecked Sendable`: written by one ``S3Upload`` (an actor) while it fills, then only read (hashed and sent)
/// until that upload reuses it, which it does only when no other reference is left.
///
/// ```swift
/// let part = PartBuffer(capacity: 8 << 20, budget: .shared)
/// let taken = part.append(chunk, upTo: 8 << 20)   // bytes of `chunk` that fit
/// let hash = part.sha256()
/// ```
final class PartBuffer: @unchecked Sendable {
    /// Bytes mapped; the most the buffer holds.
    let capacity: Int
    /// Bytes written.
    private(set) var count = 0
    private let base: UnsafeMutableRawPointer
    /// Whether `base` came from `mmap` (else from the allocator, when the system refused a mapping).
    private let isMapped: Bool
    /// The budget the buffer's memory is charged to, and the bytes charged: the most it has held (its pages stay
    /// resident when it is emptied for the next part), given back when the buffer goes.
    let budget: MultipartMemoryBudget
    var charged = 0

    init(capacity: Int, budget: MultipartMemoryBudget) {
        self.capacity = capacity
        self.budget = budget
        let mapped = mmap(nil, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        if let mapped, mapped != UnsafeMutableRawPointer(bitPattern: -1) {  // MAP_FAILED
            base = mapped
            isMapped = true
        } else {
            base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
            isMapped = false
        }
    }

    deinit {
        if isMapped { munmap(base, capacity) } else { base.deallocate() }
        budget.release(charged)
    }

    /// Appends the first bytes of `bytes` that fit below `limit` (at most ``capacity``); returns how many it took.
    func append(_ bytes: Span<UInt8>, upTo limit: Int) -> Int {
        let taken = min(bytes.count, min(limit, capacity) - count)
        guard taken > 0 else { return 0 }
        bytes.withUnsafeBytes { (base + count).copyMemory(from: $0.baseAddress!, byteCount: taken) }
        count += taken
        return taken
    }

    /// Appends the first bytes of `bytes` that fit below `limit`; see ``append(_:upTo:)-(Span<UInt8>,_)``.
    func append(_ bytes: ArraySlice<UInt8>, upTo limit: Int) -> Int { append(bytes.span, upTo: limit) }

    /// Forgets the bytes written, keeping the mapping for the next part.
    func removeAll() { count = 0 }

    /// The SHA-256 of the bytes written.
    func sha256() -> SHA256.Digest {
        SHA256.hash(data: UnsafeRawBufferPointer(start: base, count: count))
    }

    /// The CRC-32C of the bytes written, most significant byte first.
    func crc32c() -> [UInt8] {
        var digest = CRC32CDigest()
        digest.update(UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: count).span)
        return digest.finalize()
    }

    /// A copy of at most `maxLength` bytes from `offset`, as AsyncHTTPClient sends a body.
    func chunk(from offset: Int, maxLength: Int) -> ByteBuffer {
        let length = min(maxLength, count - offset)
        var buffer = ByteBufferAllocator().buffer(capacity: length)
        buffer.writeBytes(UnsafeRawBufferPointer(start: base + offset, count: length))
        return buffer
    }
}
