import Foundation

extension DecodingError.Context {
    /// The context of a decoding error of the form's own making: `sentence` says what was wrong with which field, as
    /// the client sent it, in words fit for the client. The underlying ``MultipartError`` of `code` carries the same
    /// sentence, which is how ``MultipartErrorResponse`` tells these errors from one a type's own `init(from:)`
    /// threw (whose text is Swift's, not the client's).
    static func form(_ path: [any CodingKey], _ code: MultipartError.Code, _ sentence: String) -> Self {
        Self(
            codingPath: path, debugDescription: sentence, underlyingError: MultipartError(code: code, message: sentence)
        )
    }
}

/// What a field must hold to decode as `type`, in words a client reads ("a whole number", not `Int`).
func formKind(of type: Any.Type) -> String {
    switch type {
    case is any FixedWidthInteger.Type: "a whole number"
    case is any BinaryFloatingPoint.Type, is Decimal.Type: "a number"
    case is Bool.Type: "true or false"
    case is Date.Type: "a date"
    case is URL.Type: "a URL"
    case is String.Type, is Substring.Type, is Character.Type: "text"
    case is SpooledFile.Type, is MultipartFile.Type: "a file"
    default: "a value of another kind"
    }
}
