import Crypto
import NIOConcurrencyHelpers

/// The signing key of the day, kept for the signer's copies to share: Signature Version 4 derives it from the secret
/// with four HMACs, which a request would otherwise repeat. One key is kept, for the last scope asked for; another
/// secret (credentials that rotated), another day or another region makes it anew.
///
/// ```swift
/// let key = keys.key(for: scope) { derive(scope) }  // derives once a day for the same secret
/// ```
final class SigningKeys: Sendable {
    /// What a signing key is derived from.
    struct Scope: Hashable, Sendable {
        var secret: String
        var day: String
        var region: String
        var service: String
    }

    private let last = NIOLockedValueBox<(scope: Scope, key: SymmetricKey)?>(nil)

    /// How many keys were derived: for the tests that show one key a day serves every request.
    var derivations: Int { derived.withLockedValue { $0 } }
    private let derived = NIOLockedValueBox(0)

    /// The key for `scope`: the one kept when it was made for the same scope, else `derive`'s, kept.
    func key(for scope: Scope, derive: () -> SymmetricKey) -> SymmetricKey {
        if let kept = last.withLockedValue({ $0 }), kept.scope == scope { return kept.key }
        let key = derive()
        derived.withLockedValue { $0 += 1 }
        last.withLockedValue { $0 = (scope, key) }
        return key
    }
}
