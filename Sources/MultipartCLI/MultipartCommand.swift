import ArgumentParser
import Foundation
import NIOCore
import NIOPosix

/// `multipart`: build and parse multipart/form-data bodies from the command line.
@main
struct MultipartCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "multipart",
        abstract: "Build, parse and send multipart/form-data bodies without holding them in memory.",
        version: MultipartCommand.version,
        subcommands: [BuildCommand.self, ParseCommand.self, SendCommand.self]
    )

    /// The package version this tool belongs to.
    static let version = "0.3.0"

    /// Options whose value may begin with a dash: browser boundaries do (`----WebKitFormBoundary…`), and so may a
    /// field name (`-F -a=1`, which curl accepts). Each maps to the long spelling it is joined to.
    static let dashedValueOptions: [String: String] = [
        "--boundary": "--boundary", "--content-type": "--content-type", "-F": "--form", "--form": "--form",
        "--form-string": "--form-string",
    ]

    /// Parses and runs the command. A usage error is one line on standard error naming the problem and pointing at
    /// `--help`, with exit status 1, as curl does; `--help` and `--version` print to standard output.
    static func main() async {
        let arguments = joiningDashedValues(Array(CommandLine.arguments.dropFirst()))
        if arguments.first == "send" {
            // `send` runs its tasks on NIO's event loops: AsyncHTTPClient pulls the body from a task it starts on the
            // connection's loop, which then reads each buffer on that thread and writes it without a hop between
            // threads (curl's one-thread loop). Done first thing, on the main thread, before any task is enqueued.
            NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        }
        do {
            var command = try parseAsRoot(arguments)
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let code as ExitCode {
            Self.exit(withError: code)  // a failure that printed its own line: exits without a word
        } catch {
            if exitCode(for: error) == .success { Self.exit(withError: error) }  // --help, --version
            let problem = message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
            let subcommand = arguments.first.flatMap { ["build", "parse", "send"].contains($0) ? $0 : nil }
            let help = subcommand.map { "multipart \($0) --help" } ?? "multipart --help"
            FileHandle.standardError.write(Data("multipart: \(problem) (see \(help))\n".utf8))
            if subcommand == "parse" && arguments.contains("--json") {
                print(JSONReport.failed(ParseFailure(code: "usage", "\(problem) (see \(help))")))  // one document
            }
            Self.exit(withError: ExitCode(1))
        }
    }

    /// Rewrites `--boundary ----X` as `--boundary=----X` and `-F -a=1` as `--form=-a=1`, which ArgumentParser would
    /// otherwise read as options.
    static func joiningDashedValues(_ arguments: [String]) -> [String] {
        var result: [String] = []
        var index = 0
        while index < arguments.count {
            if let long = dashedValueOptions[arguments[index]], index + 1 < arguments.count {
                result.append("\(long)=\(arguments[index + 1])")
                index += 2
            } else {
                result.append(arguments[index])
                index += 1
            }
        }
        return result
    }
}
