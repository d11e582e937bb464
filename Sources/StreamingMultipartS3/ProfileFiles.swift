import Foundation

/// The shared `credentials` and `config` files of the AWS CLI and SDKs, read for one profile's static keys.
///
/// ```ini
/// # ~/.aws/credentials           # ~/.aws/config
/// [uploads]                      [profile uploads]
/// aws_access_key_id = AKID…      region = eu-west-3
/// aws_secret_access_key = …      aws_session_token = …
/// ```
///
/// Lines starting with `#` or `;` are comments; keys are read in any case; indented lines (a nested setting such as
/// `s3 =`'s) are skipped. A profile's settings from both files are merged, the credentials file's winning.
struct ProfileFiles: Sendable {
    let profile: String
    let credentialsPath: String
    let configPath: String

    init(name: String?, environment: [String: String]) {
        profile = name ?? environment.firstSet("AWS_PROFILE") ?? "default"
        let home = environment["HOME"] ?? NSHomeDirectory()
        func path(_ variable: String, _ file: String) -> String {
            guard let set = environment.firstSet(variable) else { return home + "/.aws/" + file }
            return set.hasPrefix("~/") ? home + set.dropFirst() : set
        }
        credentialsPath = path("AWS_SHARED_CREDENTIALS_FILE", "credentials")
        configPath = path("AWS_CONFIG_FILE", "config")
    }

    var notSetUp: String { "neither \(credentialsPath) nor \(configPath) has the profile \(profile)" }

    /// The profile's keys; nil when neither file has the profile.
    ///
    /// - Throws: ``S3Error/Code/missingCredentials`` for a profile without keys (saying when it is one of the kinds
    ///   not read here) or with a key but no secret.
    func credentials() throws -> S3Credentials? {
        let fromConfig = Self.sections(of: configPath, isConfig: true)[profile]
        let fromCredentials = Self.sections(of: credentialsPath, isConfig: false)[profile]
        guard fromConfig != nil || fromCredentials != nil else { return nil }
        let settings = (fromConfig ?? [:]).merging(fromCredentials ?? [:]) { _, credentials in credentials }
        let name = "profile \(profile)"
        guard let key = settings["aws_access_key_id"], !key.isEmpty else {
            let unread = ["role_arn", "sso_session", "sso_start_url", "credential_process", "web_identity_token_file"]
                .filter { settings[$0] != nil }
            let kind = unread.isEmpty ? "" : " (it uses \(unread.joined(separator: ", ")), which is not read here)"
            throw S3Error(code: .missingCredentials, message: "\(name) has no aws_access_key_id\(kind)")
        }
        guard let secret = settings["aws_secret_access_key"], !secret.isEmpty else {
            throw S3Error(code: .missingCredentials, message: "\(name) has no aws_secret_access_key")
        }
        let token = settings["aws_session_token"].flatMap { $0.isEmpty ? nil : $0 }
        return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: token)
    }

    /// Each profile's settings in the file at `path` (none when it cannot be read). In a config file a section is
    /// `[profile NAME]`, or `[default]`; in a credentials file, `[NAME]`.
    static func sections(of path: String, isConfig: Bool) -> [String: [String: String]] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [:] }
        return sections(in: text, isConfig: isConfig)
    }

    static func sections(in text: String, isConfig: Bool) -> [String: [String: String]] {
        var sections: [String: [String: String]] = [:]
        var current: String?
        for rawLine in text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline) {
            if rawLine.first == " " || rawLine.first == "\t" { continue }  // a nested setting's line
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]") else {
                    current = nil
                    continue
                }
                let title = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                current = profileName(ofSection: title, isConfig: isConfig)
                if let current, sections[current] == nil { sections[current] = [:] }
                continue
            }
            guard let current, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            sections[current]?[key] = value
        }
        return sections
    }

    /// The profile a section's title names, or nil for another kind of section (`sso-session`, `services`).
    static func profileName(ofSection title: String, isConfig: Bool) -> String? {
        guard isConfig else { return title }
        if title == "default" { return title }
        let words = title.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard words.count == 2, words[0] == "profile" else { return nil }
        return words[1].trimmingCharacters(in: .whitespaces)
    }
}
