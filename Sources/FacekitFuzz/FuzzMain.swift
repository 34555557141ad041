import Foundation
#if canImport(Glibc)
import Glibc
#endif

func printError(_ message: String) { FileHandle.standardError.write(Data(("facekit-fuzz: " + message + "\n").utf8)) }

#if FACEKIT_LIBFUZZER
// Built by scripts/fuzz with `--sanitize=fuzzer --sanitize=address -Xswiftc -DFACEKIT_LIBFUZZER`:
// libFuzzer supplies main and calls these. The parser is chosen by $FACEKIT_FUZZ_TARGET, so one
// instrumented binary serves every target.

/// The target of this process, read once.
let selectedTarget: FuzzTarget = {
    let name = getenv("FACEKIT_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let t = FuzzTarget(rawValue: name) else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: " ")
        printError("set FACEKIT_FUZZ_TARGET to one of: \(names)")
        exit(64)
    }
    return t
}()

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<Int32>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> Int32 {
    _ = selectedTarget
    if selectedTarget == .sessionJSON || selectedTarget == .framesLog || selectedTarget == .eventsLog || selectedTarget == .depthLog {
        _ = SessionFuzzing.shared   // records the session before the first input is timed
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    selectedTarget.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
#else

/// The same targets without libFuzzer: replays inputs (a crash file libFuzzer wrote, a corpus
/// directory) through a parser in an ordinary build, and writes the seeds facekit makes itself.
@main
struct FuzzReplay {
    static let usage = """
        usage: facekit-fuzz list
               facekit-fuzz run TARGET FILE|DIR...   feed each file (each file of each DIR) to TARGET's parser
               facekit-fuzz seeds DIR                write the seeds facekit's own writers make into DIR/<target>/
        """

    static func main() {
        let args = Array(CommandLine.arguments.dropFirst())
        switch args.first {
        case "list":
            for t in FuzzTarget.allCases { print(t.rawValue.padding(toLength: 14, withPad: " ", startingAt: 0), t.summary) }
        case "run" where args.count >= 3:
            guard let t = FuzzTarget(rawValue: args[1]) else { fail("unknown target '\(args[1])'") }
            var n = 0
            for path in args.dropFirst(2) {
                for file in files(path) {
                    guard let data = FileManager.default.contents(atPath: file) else { fail("cannot read \(file)") }
                    data.withUnsafeBytes { t.run($0) }
                    n += 1
                }
            }
            print("\(t.rawValue): \(n) input\(n == 1 ? "" : "s") read without a crash")
        case "seeds" where args.count == 2:
            do { try FuzzSeeds.write(to: args[1]) } catch { fail("\(error)") }
        default:
            FileHandle.standardError.write(Data((usage + "\n").utf8))
            exit(64)
        }
    }

    static func files(_ path: String) -> [String] {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue else { return [path] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.sorted().map { path + "/" + $0 }
    }

    static func fail(_ message: String) -> Never {
        printError(message)
        exit(1)
    }
}
#endif
