import StreamingMultipart

extension MultipartError {
    /// The error as a person reads it on a terminal: the message, the part (counted from 1) and the byte where it
    /// went wrong, and a system call's failure behind it; no type name (``MultipartError/description`` is for logs).
    ///
    /// `the body ended inside part 2 (120 body bytes read) (at byte 311)`
    var sentence: String {
        var text = message
        if let partIndex, !message.contains("part \(partIndex + 1)") { text += " (part \(partIndex + 1))" }
        if let offset { text += " (at byte \(offset))" }
        switch cause {
        case let cause as SystemCallError: text += ": \(cause)"
        case let cause as MultipartError: text += ": \(cause.sentence)"
        default: break
        }
        return text
    }
}
