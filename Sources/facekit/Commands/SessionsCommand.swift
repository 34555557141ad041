import Foundation
import LinuxSystem
import Recording

/// Resolves `--store DIR` or the documented default (`SessionStore.defaultRoot`). Commands that
/// only read or remove (`create: false`) never create the directory.
func openStore(_ args: ArgumentScanner, create: Bool = true) throws -> SessionStore {
    try SessionStore(root: args.value("store") ?? SessionStore.defaultRoot, create: create)
}

/// A command that acts on each session ID it names (with `--store`). A session it fails on (false,
/// or an error, which is printed) makes the exit code 1 and does not stop the others.
protocol SessionIDCommand: Command {
    var args: ArgumentScanner { get }
    init(args: ArgumentScanner)
    /// Acts on one session; false when it failed.
    func run(store: SessionStore, id: String) throws -> Bool
}

extension SessionIDCommand {
    init(arguments: [String]) throws {
        let args = try ArgumentScanner(arguments, valueOptions: ["store"], flagOptions: [])
        guard !args.positionals.isEmpty else { throw UsageError("name at least one session ID (see facekit sessions list)") }
        self.init(args: args)
    }

    func run() throws -> Int32 {
        let store = try openStore(args, create: false)
        var rc: Int32 = 0
        for id in args.positionals {
            do { if try !run(store: store, id: id) { rc = 1 } } catch { printError("facekit: \(error)"); rc = 1 }
        }
        return rc
    }
}

/// `facekit sessions list`: one line per session (or JSON), recovering crashed sessions on the way.
struct SessionsListCommand: Command {
    static let about = CommandAbout(["sessions", "list"], "facekit sessions list [--store DIR] [--json]",
                                    "List stored sessions: participant, frames, duration, bytes, state (recovers crashed ones).")
    let args: ArgumentScanner
    init(arguments: [String]) throws {
        args = try ArgumentScanner(arguments, valueOptions: ["store"], flagOptions: ["json"])
        try args.rejectPositionals()
    }

    func run() throws -> Int32 {
        let store = try openStore(args, create: false)
        let listing = try store.list()
        if args.flag("json") {
            try printJSON(object: listing.map(\.jsonRow))
        } else {
            print("store: \(store.root)")
            if listing.isEmpty { print("(no sessions)") }
            for l in listing { print(l.textLine) }
        }
        // Unreadable sessions are reported but do not hide the others; the exit code flags them.
        return listing.contains(where: \.isFaulty) ? 1 : 0
    }
}

/// `facekit sessions delete`: removes sessions completely (refuses live ones).
struct SessionsDeleteCommand: SessionIDCommand {
    static let about = CommandAbout(["sessions", "delete"], "facekit sessions delete <session-id>... [--store DIR]",
                                    "Delete sessions completely (only those named).")
    let args: ArgumentScanner

    func run(store: SessionStore, id: String) throws -> Bool {
        try store.delete(id)
        print("deleted \(id)")
        return true
    }
}

/// `facekit sessions verify`: checks every record of every log of the named sessions.
struct SessionsVerifyCommand: SessionIDCommand {
    static let about = CommandAbout(["sessions", "verify"], "facekit sessions verify <session-id>... [--store DIR]",
                                    "Check every record of every log of a session and say what is damaged (exit 0 clean, 1 damaged).")
    let args: ArgumentScanner

    func run(store: SessionStore, id: String) throws -> Bool {
        let v = try store.verify(id)
        for line in v.lines { print("\(id): \(line)") }
        print("\(id): \(v.isClean ? "clean" : "damaged")")
        return v.isClean
    }
}

/// `facekit sessions record-synthetic`: records deterministic synthetic frames (SyntheticFrames)
/// through the real recorder. For demos, the fault trials (scripts/tests/20-storage-*.sh) and
/// checking a store without a camera.
struct SessionsRecordSyntheticCommand: Command {
    static let about = CommandAbout(["sessions", "record-synthetic"], "facekit sessions record-synthetic --participant P [--frames N] [--fps 30] [--speed X] [--vertices MODE] [--images-every N] [--flush-ms MS] [--seed S] [--events K] [--pause-at N] [--report-flushes] [--store DIR]",
                                    "Record a synthetic session through the real recorder (tests, demos).")
    let args: ArgumentScanner
    init(arguments: [String]) throws {
        args = try ArgumentScanner(arguments, valueOptions: ["store", "participant", "frames", "fps", "speed", "vertices", "images-every",
                                                             "flush-ms", "seed", "events", "pause-at", "queue"],
                                   flagOptions: ["report-flushes"])
        try args.rejectPositionals()
    }

    func run() throws -> Int32 {
        let participant = args.value("participant") ?? "SYNTH"
        do { try SessionStore.validateParticipant(participant) } catch { throw UsageError("--participant: \(error.message)") }
        let store = try openStore(args)
        let recording = SyntheticRecording(
            participant: participant, frames: try args.int("frames", default: 300), fps: Double(args.value("fps") ?? "30") ?? 30,
            speed: Double(args.value("speed") ?? "0") ?? 0, seed: Int64(try args.int("seed", default: 1)),
            events: try args.int("events", default: 3), pauseAt: try args.int("pause-at", default: -1),
            vertices: try VertexMode(parsing: args.value("vertices") ?? "all-f16"), imageEveryNth: try args.int("images-every", default: 0),
            flushIntervalMs: try args.int("flush-ms", default: 1000), queueCapacity: try args.int("queue", default: 256))
        return try recording.run(in: store, reportFlushes: args.flag("report-flushes"), say: { sayLine($0) }) ? 0 : 1
    }
}

/// Unbuffered line to stdout: the fault trials read it from a pipe while the process may die.
/// Nonisolated free function: it is called on the recorder's writer thread.
nonisolated func sayLine(_ s: String) {
    let line = s + "\n"
    _ = Array(line.utf8).withUnsafeBytes { Syscalls.writeAll(1, $0) }
}
