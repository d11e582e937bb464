import ArgumentParser

/// `multipart`: build multipart/form-data bodies from the command line.
@main
struct MultipartCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "multipart",
        abstract: "Build and parse multipart/form-data bodies without holding them in memory.",
        subcommands: [BuildCommand.self, ParseCommand.self]
    )
}
