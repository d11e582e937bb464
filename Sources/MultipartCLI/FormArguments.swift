import ArgumentParser
import Foundation
import StreamingMultipart

/// The options that make a body, shared by `build` and `send`: curl's `-F` and `--form-string`, a boundary, and
/// whole-body compression.
struct FormArguments: ParsableArguments {
    @Option(
        name: [.customShort("F"), .customLong("form")],
        help: ArgumentHelp(
            "A part, as curl's -F: name=value, name=@file, name=<file; then ;type=, ;filename=, ;headers=.",
            valueName: "name=content"))
    var form: [String] = []

    @Option(
        name: .customLong("form-string"),
        help: ArgumentHelp(
            "A text field taken literally (no @, < or ; handling).", valueName: "name=value"))
    var formString: [String] = []

    @Option(help: "Use this boundary instead of a random one (1 to 70 RFC 2046 characters).")
    var boundary: String?

    @Flag(help: "Compress the body with gzip (Content-Encoding: gzip).")
    var gzip = false

    @Flag(help: "Compress the body with deflate, zlib-wrapped (Content-Encoding: deflate).")
    var deflate = false

    @Option(help: "zlib's level for --gzip and --deflate: 1 (fastest) to 9 (smallest).")
    var compressionLevel = 6

    func validate() throws {
        if form.isEmpty && formString.isEmpty {
            throw ValidationError("give at least one part with -F or --form-string")
        }
        if gzip && deflate { throw ValidationError("give at most one of --gzip and --deflate") }
        guard (1...9).contains(compressionLevel) else {
            throw ValidationError("--compression-level must be 1 to 9, got \(compressionLevel)")
        }
    }

    var compression: MultipartBody.Compression? {
        gzip ? .gzip(level: compressionLevel) : deflate ? .deflate(level: compressionLevel) : nil
    }

    /// The body, its parts in the order the `-F` and `--form-string` arguments came on the command line.
    ///
    /// - Throws: ``FormSpec/ParseError`` for an argument curl would refuse, `MultipartError` for a part that cannot
    ///   be made (a missing file, a boundary in a part).
    func makeBody() throws -> MultipartBody {
        var body = try boundary.map { MultipartBody(boundary: try MultipartBoundary($0)) } ?? MultipartBody()
        var forms = form.makeIterator()
        var strings = formString.makeIterator()
        let arguments = MultipartCommand.joiningDashedValues(Array(CommandLine.arguments.dropFirst()))
        for kind in Self.formOrder(in: arguments) {
            let spec = try kind == .form ? FormSpec(form: forms.next()!) : FormSpec(formString: strings.next()!)
            try body.append(spec.part())
        }
        return body
    }

    enum FormKind { case form, formString }

    /// Options of `build` and `send` whose value is the next argument, which is never a part: read from the two
    /// commands' own definitions, so that an option added to either is never missed.
    static let optionsWithValues = valueTakingOptions(of: [BuildCommand.self, SendCommand.self])

    /// The names (`-o`, `--output`) of the options of `commands` that take a value, from ArgumentParser's
    /// description of each (the JSON of `--experimental-dump-help`).
    static func valueTakingOptions(of commands: [any ParsableArguments.Type]) -> Set<String> {
        struct Description: Decodable {
            struct Command: Decodable { var arguments: [Argument]? }
            struct Argument: Decodable {
                var kind: String
                var names: [Name]?
            }
            struct Name: Decodable {
                var kind: String
                var name: String
            }
            var command: Command
        }
        var names: Set<String> = []
        for command in commands {
            let description = try? JSONDecoder().decode(Description.self, from: Data(command._dumpHelp().utf8))
            for argument in description?.command.arguments ?? [] where argument.kind == "option" {
                for name in argument.names ?? [] { names.insert((name.kind == "long" ? "--" : "-") + name.name) }
            }
        }
        return names
    }

    /// The order of `-F` and `--form-string` arguments on the command line, which ArgumentParser keeps within
    /// each option but not across the two.
    static func formOrder(in arguments: [String]) -> [FormKind] {
        var kinds: [FormKind] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" { break }
            switch argument {
            case "-F", "--form":
                kinds.append(.form)
                index += 1
            case "--form-string":
                kinds.append(.formString)
                index += 1
            case _ where optionsWithValues.contains(argument): index += 1
            default:
                if argument.hasPrefix("--form-string=") {
                    kinds.append(.formString)
                } else if argument.hasPrefix("--form=") || (argument.hasPrefix("-F") && argument.count > 2) {
                    kinds.append(.form)
                }
            }
            index += 1
        }
        return kinds
    }
}
