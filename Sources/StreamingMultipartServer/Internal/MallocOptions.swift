#if canImport(Glibc)
import Glibc
#endif

/// glibc's `mallopt`, looked up by name: `<malloc.h>` is not in Swift's Glibc module. Nil where the C library has no
/// `mallopt` (musl, Darwin).
enum MallocOptions {
    /// `M_TRIM_THRESHOLD` in `<malloc.h>`.
    static let trimThreshold: Int32 = -1

    /// Sets `option` to `value`; false when it could not be set.
    static func set(_ option: Int32, to value: Int32) -> Bool {
        #if canImport(Glibc)
        typealias MallOpt = @convention(c) (Int32, Int32) -> Int32
        // RTLD_DEFAULT: the symbol wherever the process has it.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return false }
        return unsafeBitCast(symbol, to: MallOpt.self)(option, value) == 1
        #else
        return false
        #endif
    }
}
