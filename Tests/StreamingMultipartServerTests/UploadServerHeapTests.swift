import StreamingMultipartServer
import Testing

/// The heap setting takes where glibc is (it finds `mallopt` by name and glibc accepts the threshold), and is a
/// no-op elsewhere.
@Suite struct UploadServerHeapTests {
    @Test func theTrimThresholdTakesOnGlibc() {
        #if canImport(Glibc)
        #expect(UploadServerHeap.keepFreedMemory(upTo: 256 << 20))
        #expect(UploadServerHeap.keepFreedMemory())
        #else
        #expect(!UploadServerHeap.keepFreedMemory())
        #endif
    }
}
