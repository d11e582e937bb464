import StreamingMultipart

/// The document `parse --json` prints: `{"parts":[…]}`, or `{"parts":[…],"error":{"code","message","offset"}}`
/// when the parse fails, after the parts that were whole before the failure.
///
/// The opening is printed when the report is made, before anything can fail, and ``finish(failing:)`` closes it on
/// every path: the output is one valid JSON document whatever goes wrong (an option, the input, the body, the
/// output folder). Parts are printed as they come, so a body of a million parts holds one part's text at a time.
struct JSONReport {
    private let printing: Bool
    private var parts = 0
    private var finished = false

    /// A report that prints when `printing` (`--json`), and does nothing otherwise.
    init(printing: Bool) {
        self.printing = printing
        if printing { print("{\"parts\":[", terminator: "") }
    }

    /// Prints one part's object.
    mutating func add(_ part: String) {
        guard printing, !finished else { return }
        print((parts == 0 ? "" : ",") + part, terminator: "")
        parts += 1
    }

    /// Closes the document, with the failure that ended the parse, if any.
    mutating func finish(failing failure: ParseFailure? = nil) {
        guard printing, !finished else { return }
        finished = true
        guard let failure else {
            print("]}")
            return
        }
        print("],\"error\":\(failure.json)}")
    }

    /// The whole document for a failure before any report could be made (a usage error).
    static func failed(_ failure: ParseFailure) -> String { "{\"parts\":[],\"error\":\(failure.json)}" }
}

/// Why `parse` failed: a ``MultipartError``'s code, message and offset, or one of the tool's own
/// (`inputUnreadable`, `outputFailed`, `usage`).
struct ParseFailure: Error, CustomStringConvertible {
    var code: String
    var message: String
    var offset: Int64?
    /// The library's error, for the one-line description without `--json`.
    var error: MultipartError?
    /// What the user may have meant, said after the message (e.g. a compressed body parsed as plain).
    var hint: String?

    init(code: String, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `error` as a failure: a ``MultipartError`` keeps its code, message and offset.
    init(_ error: any Error) {
        switch error {
        case let failure as ParseFailure:
            self = failure
        case let error as MultipartError:
            self.init(code: error.code.name, error.message)
            offset = error.offset
            self.error = error
        default:
            self.init(code: "failed", "\(error)")
        }
    }

    var description: String { (error?.sentence ?? message) + (hint.map { ": \($0)" } ?? "") }

    var json: String {
        JSONText.object([
            ("code", JSONText.string(code)), ("message", JSONText.string(message + (hint.map { ": \($0)" } ?? ""))),
            ("offset", offset.map { String($0) } ?? "null"),
        ])
    }
}
