import CProcessArguments
import Foundation

/// Dispatch: the longest command path that prefixes the arguments wins.
func dispatch(_ args: [String]) -> Int32 {
    guard !args.isEmpty else { print(HelpCommand.text); return 64 }
    if args == ["--help"] || args == ["-h"] { print(HelpCommand.text); return 0 }
    let candidates = CommandTable.all.filter { args.starts(with: $0.path) }
    guard let type = candidates.max(by: { $0.path.count < $1.path.count }) else {
        printError("facekit: unknown command '\(args.joined(separator: " "))'\n")
        printError(HelpCommand.text)
        return 64
    }
    let rest = Array(args.dropFirst(type.path.count))
    if rest.contains("--help") { print("usage: \(type.synopsis)\n\n\(type.abstract)"); return 0 }
    do {
        let cmd = try type.init(arguments: rest)
        return try cmd.run()
    } catch let e as UsageError {
        printError("facekit: \(e.message)\nusage: \(type.synopsis)")
        return 64
    } catch {
        printError("facekit: \(error)")
        return 1
    }
}


/// The arguments as glibc passed them to main (CProcessArguments says why not CommandLine's).
func processArguments() -> [String] {
    var argc: Int32 = 0
    guard let argv = facekit_process_arguments(&argc), argc > 0 else { return CommandLine.arguments }
    return (0..<Int(argc)).map { argv[$0].map { String(cString: $0) } ?? "" }
}

exit(dispatch(Array(processArguments().dropFirst())))
