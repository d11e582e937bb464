import Crypto

extension SHA256 {
    /// Adds `bytes` to the hash: swift-crypto takes a raw buffer, lent here for the length of the call.
    mutating func update(_ bytes: Span<UInt8>) {
        bytes.withUnsafeBytes { update(bufferPointer: $0) }
    }
}
