import ArgumentParser

/// `multipart`: build and parse multipart/form-data bodies from the command line.
@main
struct MultipartCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "multipart",
        abstract: "Build and parse multipart/form-data bodies without holding them in memory.",
        subcommands: [BuildCommand.self, ParseCommand.self]
    )

    /// Options whose value may begin with dashes (browser boundaries do: `----WebKitFormBoundary…`).
    static let dashedValueOptions: Set<String> = ["--boundary", "--content-type"]

    static func main() {
        main(joiningDashedValues(Array(CommandLine.arguments.dropFirst())))
    }

    /// Rewrites `--boundary ----X` as `--boundary=----X`, which ArgumentParser would otherwise read as an option.
    static func joiningDashedValues(_ arguments: [String]) -> [String] {
        var result: [String] = []
        var index = 0
        while index < arguments.count {
            if dashedValueOptions.contains(arguments[index]), index + 1 < arguments.count {
                result.append("\(arguments[index])=\(arguments[index + 1])")
                index += 2
            } else {
                result.append(arguments[index])
                index += 1
            }
        }
        return result
    }
}
