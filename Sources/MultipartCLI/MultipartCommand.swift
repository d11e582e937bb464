import ArgumentParser

/// `multipart`: build multipart/form-data bodies from the command line.
@main
struct MultipartCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "multipart",
        abstract: "Build multipart/form-data bodies that stream from disk.",
        subcommands: [BuildCommand.self]
    )
}
