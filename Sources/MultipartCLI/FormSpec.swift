import Foundation
import StreamingMultipart

/// One `-F` or `--form-string` argument, parsed with curl's rules.
///
/// `-F name=value` is a text field; `-F name=@path` a file part (filename and type inferred);
/// `-F 'name=<path'` a text field whose value is the file's content; `@-` and `<-` read standard input.
/// Parameters follow `;`: `type=`, `filename=` and `headers=` (one `Name: value` header line); as in curl, other
/// parameters right after `type=` belong to the type (`;type=text/plain; charset=utf-8`). Values may be
/// double-quoted (with `\"` and `\\`) to hold `;` or start with `@` or `<`. `--form-string name=value` is taken
/// literally. `-F 'name=@a,b'` sends the files nested in one `multipart/mixed` part, as curl does (RFC 7578 §4.3
/// deprecates it; a note says so); a quoted path keeps its commas. As in curl, a file's parameters end at the comma
/// that starts the next file: `-F 'f=@a.txt;type=x/a,b.txt'` is `a.txt` typed `x/a`, then `b.txt`.
struct FormSpec {
    enum Source: Equatable {
        case text(String)
        case file(String)
        case fileContent(String)
        /// `@a,b`: several files in one multipart/mixed part.
        case files([ListedFile])
    }

    /// One file of `@a,b`, with the parameters written after it.
    struct ListedFile: Equatable {
        var path: String
        var contentType: String?
        var filename: String?
    }

    var name: String
    var source: Source
    var contentType: String?
    var filename: String?
    var headers: [String] = []

    struct ParseError: Error, CustomStringConvertible {
        var description: String
    }

    /// Parses a `-F` argument.
    init(form argument: String) throws {
        guard let equals = argument.firstIndex(of: "=") else {
            throw ParseError(description: "-F \(argument.debugDescription): expected name=content")
        }
        name = String(argument[..<equals])
        var scanner = Scanner(argument[argument.index(after: equals)...])
        var parameters = Parameters()
        switch scanner.peek() {
        case "@":
            scanner.advance()
            var files: [ListedFile] = []
            repeat {
                let path = try scanner.word(endingAtComma: true)
                let own = try Parameters(&scanner, of: argument, endingAtComma: true)
                files.append(ListedFile(path: path, contentType: own.contentType, filename: own.filename))
                parameters.headers += own.headers
            } while scanner.skip(",")
            if files.count == 1 {
                source = .file(files[0].path)
                (parameters.contentType, parameters.filename) = (files[0].contentType, files[0].filename)
            } else if parameters.headers.isEmpty {
                source = .files(files)
            } else {
                throw ParseError(
                    description: "-F \(argument.debugDescription): headers= is not taken with a list of files; send "
                        + "each file as its own -F")
            }
        case "<":
            scanner.advance()
            source = .fileContent(try scanner.word())
            parameters = try Parameters(&scanner, of: argument, endingAtComma: false)
        default:
            source = .text(try scanner.word())
            parameters = try Parameters(&scanner, of: argument, endingAtComma: false)
        }
        (contentType, filename, headers) = (parameters.contentType, parameters.filename, parameters.headers)
    }

    /// The `;key=value` parameters after a part's content.
    private struct Parameters {
        var contentType: String?
        var filename: String?
        var headers: [String] = []

        init() {}

        /// Reads them; for a file, a comma ends them (the next file follows it).
        init(_ scanner: inout Scanner, of argument: String, endingAtComma: Bool) throws {
            var lastKey = ""
            while !scanner.isAtEnd, !(endingAtComma && scanner.peek() == ",") {
                guard scanner.skip(";") else {
                    throw ParseError(
                        description:
                            "-F \(argument.debugDescription): expected ';' before \(scanner.rest.debugDescription)")
                }
                scanner.skipSpaces()
                let key = scanner.key().lowercased()
                let value = try scanner.word(endingAtComma: endingAtComma)
                switch key {
                case "type": contentType = value
                case "filename": filename = value
                case "headers": headers.append(value)
                case _ where lastKey == "type":
                    // A parameter of the type, as curl reads `;type=text/plain; charset=utf-8`.
                    contentType? += "; \(key)=\(value)"
                    continue
                default:
                    throw ParseError(
                        description: "-F \(argument.debugDescription): unknown parameter \(key.debugDescription); "
                            + "quote a value that holds ';', or use --form-string")
                }
                lastKey = key
            }
        }
    }

    /// Parses a `--form-string` argument: everything after the first `=` is the value.
    init(formString argument: String) throws {
        guard let equals = argument.firstIndex(of: "=") else {
            throw ParseError(description: "--form-string \(argument.debugDescription): expected name=value")
        }
        name = String(argument[..<equals])
        source = .text(String(argument[argument.index(after: equals)...]))
    }

    /// The part this spec describes. Files are checked now; standard input becomes a one-shot stream.
    func part() throws -> MultipartPart {
        var headers = MultipartHeaders()
        var content: MultipartPart.Content
        var filename = filename
        var contentType = contentType
        switch source {
        case .files(let files):
            return try mixedPart(files)
        case .text(let text):
            content = .text(text)
        case .fileContent(let path):
            content = try Self.content(path)
        case .file(let path):
            content = try Self.content(path)
            filename = filename ?? (path == "-" ? "-" : URL(fileURLWithPath: path).lastPathComponent)
            contentType = contentType ?? filename.map(MultipartPart.contentType(forFilename:))
        }
        headers.append(.contentDisposition, ContentDisposition(name: name, filename: filename).headerValue)
        if let contentType { headers.append(.contentType, contentType) }
        for line in self.headers {
            guard let colon = line.firstIndex(of: ":") else {
                throw ParseError(description: "headers=\(line.debugDescription): expected 'Name: value'")
            }
            headers.append(
                .init(String(line[..<colon])), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return MultipartPart(headers: headers, content: content)
    }

    /// `@a,b`: the files nested in one multipart/mixed part, with a note that RFC 7578 deprecates it.
    private func mixedPart(_ listed: [ListedFile]) throws -> MultipartPart {
        let files = try listed.map { file in
            let filename = file.filename ?? URL(fileURLWithPath: file.path).lastPathComponent
            let type = file.contentType ?? MultipartPart.contentType(forFilename: filename)
            return (try Self.content(file.path), filename, type)
        }
        let note =
            "multipart: note: -F \(name)=@\(listed.map(\.path).joined(separator: ",")) sends the files nested in one "
            + "multipart/mixed part, as curl does; RFC 7578 §4.3 deprecates it and many servers read it as one "
            + "field. Send each file as its own -F \(name)=@FILE.\n"
        FileHandle.standardError.write(Data(note.utf8))
        return MultipartPart.mixed(name: name, files: files)
    }

    private static func content(_ path: String) throws -> MultipartPart.Content {
        if path == "-" { return .stream(FileHandleStream.standardInput(), length: nil) }
        return try .file(at: URL(fileURLWithPath: path))
    }
}

/// Standard input as an `InputStream`.
enum FileHandleStream {
    static func standardInput() -> InputStream {
        InputStream(fileAtPath: "/dev/stdin") ?? InputStream(data: Data())
    }
}

/// A cursor over a `-F` argument.
private struct Scanner {
    private var text: Substring

    init(_ text: Substring) { self.text = text }

    var isAtEnd: Bool { text.isEmpty }
    var rest: String { String(text) }
    func peek() -> Character? { text.first }
    mutating func advance() { text.removeFirst() }
    mutating func skipSpaces() { text = text.drop(while: { $0 == " " }) }

    /// Steps past `character` when it comes next.
    mutating func skip(_ character: Character) -> Bool {
        guard text.first == character else { return false }
        text.removeFirst()
        return true
    }

    /// A parameter name, up to and past its `=`.
    mutating func key() -> String {
        let key = text.prefix(while: { $0 != "=" && $0 != ";" })
        text = text.dropFirst(key.count)
        if text.first == "=" { text.removeFirst() }
        return String(key)
    }

    /// A value: a double-quoted string with `\` escapes, or everything up to the next `;` (or `,`, when
    /// `endingAtComma`: in a list of files).
    mutating func word(endingAtComma: Bool = false) throws -> String {
        guard text.first == "\"" else {
            let word = text.prefix(while: { $0 != ";" && !(endingAtComma && $0 == ",") })
            text = text.dropFirst(word.count)
            return String(word)
        }
        text.removeFirst()
        var word = ""
        while let character = text.first {
            text.removeFirst()
            switch character {
            case "\"": return word
            case "\\" where text.first == "\"" || text.first == "\\": word.append(text.removeFirst())
            default: word.append(character)
            }
        }
        throw FormSpec.ParseError(description: "unterminated quoted value \(word.debugDescription)")
    }
}
