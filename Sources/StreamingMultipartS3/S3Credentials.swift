public import Foundation

/// The keys an S3 request is signed with: an access key, its secret, the session token of temporary
/// credentials (STS), if any, and when they expire. An ``S3CredentialProvider`` fetches them, and again before
/// they expire.
///
/// ```swift
/// let credentials = try S3Credentials.environment()   // AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, …
/// let inCode = S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: secret)
/// ```
public struct S3Credentials: Sendable, Hashable {
    public var accessKeyID: String
    public var secretAccessKey: String
    /// Sent as `x-amz-security-token`, and signed, when set.
    public var sessionToken: String?
    /// When temporary credentials stop being accepted; nil for keys that do not expire.
    public var expiration: Date?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, expiration: Date? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.expiration = expiration
    }

    /// The credentials in `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN` (optional).
    ///
    /// - Throws: ``S3Error`` with ``S3Error/Code/missingCredentials`` naming the variable that is unset or empty.
    public static func environment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> S3Credentials {
        func value(_ name: String) throws -> String {
            guard let value = environment[name], !value.isEmpty else {
                throw S3Error(code: .missingCredentials, message: "\(name) is not set")
            }
            return value
        }
        let token = environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        return S3Credentials(
            accessKeyID: try value("AWS_ACCESS_KEY_ID"), secretAccessKey: try value("AWS_SECRET_ACCESS_KEY"),
            sessionToken: token)
    }
}

extension S3Credentials: CustomStringConvertible {
    /// The access key alone: a secret never reaches a log.
    public var description: String {
        "S3Credentials(\(accessKeyID), secret hidden\(sessionToken == nil ? "" : ", session token hidden"))"
    }
}
