import Foundation
import LinuxSystem

/// What dispatch and `facekit help` know of a command.
struct CommandAbout {
    /// Words that select the command, e.g. ["model", "convert"].
    var path: [String]
    /// The usage line.
    var synopsis: String
    /// One sentence for the help listing.
    var abstract: String

    init(_ path: [String], _ synopsis: String, _ abstract: String) {
        self.path = path; self.synopsis = synopsis; self.abstract = abstract
    }
}

/// A subcommand of `facekit`. One table (`CommandTable.all`) drives both dispatch and help.
protocol Command {
    static var about: CommandAbout { get }
    /// Parses arguments; throws `UsageError` on bad usage (exit 64).
    init(arguments: [String]) throws
    /// Runs the command; returns the process exit code.
    func run() throws -> Int32
}

extension Command {
    static var path: [String] { about.path }
    static var synopsis: String { about.synopsis }
    static var abstract: String { about.abstract }
}

/// Bad command-line usage: printed with the command's synopsis, exit code 64 (EX_USAGE).
struct UsageError: DomainError {
    var message: String
    var cause: SystemCallError? { nil }
    init(_ message: String) { self.message = message }
}

/// A failure the user can act on: printed as "facekit: <message>", exit code 1.
struct CommandFailure: DomainError {
    var message: String
    var cause: SystemCallError?
    init(_ message: String, cause: SystemCallError? = nil) { self.message = message; self.cause = cause }
}

/// Minimal argument scanner shared by every command: `--flag`, `--key value`, `--key=value`, positionals.
struct ArgumentScanner {
    private(set) var positionals: [String] = []
    private var options: [String: String] = [:]
    private var flags: Set<String> = []
    private var consumed: Set<String> = []

    /// - Parameters:
    ///   - valueOptions: options that take a value (without leading dashes).
    ///   - flagOptions: options that take no value.
    init(_ args: [String], valueOptions: Set<String>, flagOptions: Set<String>) throws {
        var i = 0
        while i < args.count {
            let a = args[i]
            if a == "--" { positionals.append(contentsOf: args[(i + 1)...]); break }
            if a.hasPrefix("-") && a.count > 1 {
                var name = String(a.drop(while: { $0 == "-" }))
                var inlineValue: String? = nil
                if let eq = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
                if valueOptions.contains(name) {
                    if let v = inlineValue { options[name] = v }
                    else {
                        guard i + 1 < args.count else { throw UsageError("option --\(name) needs a value") }
                        options[name] = args[i + 1]; i += 1
                    }
                } else if flagOptions.contains(name) && inlineValue == nil {
                    flags.insert(name)
                } else {
                    throw UsageError("unknown option \(a)")
                }
            } else {
                positionals.append(a)
            }
            i += 1
        }
    }

    func value(_ name: String) -> String? { options[name] }
    func flag(_ name: String) -> Bool { flags.contains(name) }

    func int(_ name: String, default d: Int) throws -> Int {
        guard let s = options[name] else { return d }
        guard let v = Int(s) else { throw UsageError("--\(name) expects an integer, got '\(s)'") }
        return v
    }

    func required(_ name: String) throws -> String {
        guard let v = options[name] else { throw UsageError("missing --\(name)") }
        return v
    }

    /// Throws a usage error when the command was given a positional argument it takes none of.
    func rejectPositionals() throws {
        if let p = positionals.first { throw UsageError("unexpected argument '\(p)'") }
    }
}

/// Prints a report as JSON on standard output, keys sorted (indented unless `compact`).
func printJSON<T: Encodable>(_ value: T, compact: Bool = false) throws {
    let enc = JSONEncoder()
    enc.outputFormatting = compact ? [.sortedKeys] : [.prettyPrinted, .sortedKeys]
    print(String(decoding: try enc.encode(value), as: UTF8.self))
}

/// Prints a JSONSerialization object (dictionaries, arrays) on standard output, keys sorted.
func printJSON(object: Any, compact: Bool = false) throws {
    let data = try JSONSerialization.data(withJSONObject: object, options: compact ? [.sortedKeys] : [.prettyPrinted, .sortedKeys])
    print(String(decoding: data, as: UTF8.self))
}

/// Writes to standard error.
func printError(_ s: String) {
    FileHandle.standardError.write((s + "\n").data(using: .utf8)!)
}
