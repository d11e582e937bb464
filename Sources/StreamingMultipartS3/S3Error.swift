/// An error of the S3 store: what S3 answered (its XML `Code` and `Message`, the HTTP status and the request id),
/// or what went wrong before a request could be made.
///
/// ```swift
/// do { try await store.… } catch let error as S3Error where error.code == .service {
///     print(error.serviceCode ?? "", error.status ?? 0, error.requestID ?? "")   // "SignatureDoesNotMatch" 403 …
/// }
/// ```
public struct S3Error: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// A credential the environment or the caller should have given is missing.
        case missingCredentials
        /// A setting is out of range (a part size under 5 MiB, a bucket name S3 refuses).
        case invalidConfiguration
        /// S3 answered with an error; ``serviceCode`` says which.
        case service
        /// The connection failed, or S3's answer could not be read.
        case transport
    }

    public var code: Code
    public var message: String
    /// S3's own code (`NoSuchBucket`, `SignatureDoesNotMatch`, …), for ``Code/service``.
    public var serviceCode: String?
    /// The HTTP status of S3's answer, for ``Code/service``.
    public var status: Int?
    /// The `x-amz-request-id` of the answer (or the XML's `RequestId`), to quote to the store's operators.
    public var requestID: String?

    public init(
        code: Code, message: String, serviceCode: String? = nil, status: Int? = nil, requestID: String? = nil
    ) {
        self.code = code
        self.message = message
        self.serviceCode = serviceCode
        self.status = status
        self.requestID = requestID
    }

    public var description: String {
        var text = "S3Error.\(code.rawValue): \(message)"
        if let serviceCode { text += " (\(serviceCode)" + (status.map { ", HTTP \($0)" } ?? "") + ")" }
        if let requestID { text += " [request \(requestID)]" }
        return text
    }
}
