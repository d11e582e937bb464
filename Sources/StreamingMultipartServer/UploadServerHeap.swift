/// The heap setting an upload server on Linux wants: freed memory kept in the process, not handed back to the
/// kernel after every chunk.
///
/// glibc returns the top of the heap to the kernel whenever more than 128 KiB of it is free. An upload server frees
/// and allocates chunk-sized blocks all the time (each request buffer's bytes, copied for the parser), so every
/// allocation after such a trim faults fresh pages in: a third of the example server's time in a 1 GiB upload
/// (`perf record`), 1.31–1.51 s against 0.95–1.09 s with the threshold at 256 MiB, the peak RSS the same (40 MiB),
/// since the memory is reused rather than held (`Benchmarks/RESULTS.md`). Call it once, at start:
///
/// ```swift
/// import StreamingMultipartNIO
///
/// UploadServerHeap.keepFreedMemory()
/// ```
///
/// The environment variable `MALLOC_TRIM_THRESHOLD_=268435456` does the same without code. Elsewhere (Darwin, musl)
/// it does nothing and returns false.
public enum UploadServerHeap {
    /// Keeps up to `bytes` of freed heap memory in the process (glibc's `M_TRIM_THRESHOLD`); returns whether the
    /// setting took.
    @discardableResult
    public static func keepFreedMemory(upTo bytes: Int32 = 256 << 20) -> Bool {
        MallocOptions.set(MallocOptions.trimThreshold, to: bytes)
    }
}
