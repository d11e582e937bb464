/// A parsed form: its fields in memory, its files on disk (or in memory when small), in the order the body sent
/// them. Made by ``MultipartSpooler``.
///
/// ```swift
/// try await spooler.withSpooledForm(request.body, contentType: contentType) { form in
///     let caption = form.value(of: "caption") ?? ""
///     for photo in form.files(named: "photos") {
///         try photo.move(to: "/srv/photos/\(UUID()).jpg")
///     }
/// }   // every file not moved out is removed here
/// ```
public struct SpooledForm: Sendable {
    /// The text fields (parts without a filename), in order.
    public let fields: [Field]
    /// The file parts, in order.
    public let files: [SpooledFile]
    /// The form's charset, from its `_charset_` field (HTML's way of saying how fields are encoded), or nil.
    public let charset: String?

    /// A text field.
    public struct Field: Sendable, Hashable {
        /// The field name.
        public let name: String
        /// The value, decoded with the part's own `charset` parameter, else the form's `_charset_`, else UTF-8;
        /// bytes that are not valid UTF-8 become U+FFFD.
        public let value: String
        /// The part's `Content-Type` value as sent, or nil when it sent none.
        public let contentType: String?
        /// The part's index in the body, from 0.
        public let partIndex: Int
        /// The bytes as sent when they are not `value`'s UTF-8 (another charset, bytes that are not UTF-8); nil
        /// when they are, so that a field holds its text once.
        let bytesAsSent: [UInt8]?

        /// The value's bytes as sent: `value`'s UTF-8, unless the part came in another charset or with bytes that
        /// are not valid UTF-8.
        public var bytes: [UInt8] { bytesAsSent ?? Array(value.utf8) }

        /// A field whose `value` was decoded from `bytes`.
        init(name: String, value: String, bytes: [UInt8], contentType: String?, partIndex: Int) {
            self.name = name
            self.value = value
            self.contentType = contentType
            self.partIndex = partIndex
            bytesAsSent = value.utf8Equals(bytes) ? nil : bytes
        }
    }

    /// The first value of the field `name`, or nil when the form has none.
    public func value(of name: String) -> String? {
        fields.first { $0.name == name }?.value
    }

    /// Every value of the field `name`, in order (a repeated name, `<select multiple>`, checkboxes).
    public func values(of name: String) -> [String] {
        fields.filter { $0.name == name }.map(\.value)
    }

    /// The first file of the field `name`, or nil.
    public func file(named name: String) -> SpooledFile? {
        files.first { $0.name == name }
    }

    /// Every file of the field `name`, in order (`<input type=file multiple>`).
    public func files(named name: String) -> [SpooledFile] {
        files.filter { $0.name == name }
    }

    /// Removes every spooled file still on disk; those moved out stay where they were moved.
    public func removeFiles() {
        for file in files { file.remove() }
    }
}
