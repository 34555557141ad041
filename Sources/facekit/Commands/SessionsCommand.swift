import Foundation
import LinuxSystem
import Recording

/// Resolves `--store DIR` or the documented default (`SessionStore.defaultRoot`). Commands that
/// only read or remove (`create: false`) never create the directory.
func openStore(_ args: ArgumentScanner, create: Bool = true) throws -> SessionStore {
    try SessionStore(root: args.value("store") ?? SessionStore.defaultRoot, create: create)
}

/// Runs `body` on each session named on the command line; a failure (false, or an error, which is
/// printed) makes the exit code 1 and does not stop the others.
func forEachNamedSession(_ args: ArgumentScanner, _ body: (SessionStore, String) throws -> Bool) throws -> Int32 {
    let store = try openStore(args, create: false)
    var rc: Int32 = 0
    for id in args.positionals {
        do { if try !body(store, id) { rc = 1 } } catch { printError("facekit: \(error)"); rc = 1 }
    }
    return rc
}

/// The arguments of a command that takes session IDs and `--store`.
func sessionIDArguments(_ arguments: [String]) throws -> ArgumentScanner {
    let args = try ArgumentScanner(arguments, valueOptions: ["store"], flagOptions: [])
    guard !args.positionals.isEmpty else { throw UsageError("name at least one session ID (see facekit sessions list)") }
    return args
}

/// `facekit sessions list`: one line per session (or JSON), recovering crashed sessions on the way.
struct SessionsListCommand: Command {
    static let path = ["sessions", "list"]
    static let synopsis = "facekit sessions list [--store DIR] [--json]"
    static let abstract = "List stored sessions: participant, frames, duration, bytes, state (recovers crashed ones)."
    let args: ArgumentScanner
    init(arguments: [String]) throws {
        args = try ArgumentScanner(arguments, valueOptions: ["store"], flagOptions: ["json"])
        guard args.positionals.isEmpty else { throw UsageError("unexpected argument '\(args.positionals[0])'") }
    }

    func run() throws -> Int32 {
        let store = try openStore(args, create: false)
        let listing = try store.list()
        var failed = false
        if args.flag("json") {
            var rows: [[String: Any]] = []
            for l in listing {
                switch l.result {
                case .success(let s):
                    var row: [String: Any] = ["sessionID": s.sessionID, "participant": s.participant, "state": s.state.rawValue,
                                              "frameCount": s.frameCount, "storageBytes": s.storageBytes,
                                              "startedAt": s.metadata.startedAt, "droppedFrames": s.metadata.droppedFrames]
                    row["durationSeconds"] = s.durationSeconds ?? NSNull()
                    if let e = s.metadata.error { row["error"] = e }
                    if let r = s.metadata.recovery { row["recovery"] = r }
                    if s.damagedRecords > 0 { row["state"] = "damaged"; row["damaged"] = s.damagedRecords; failed = true }
                    rows.append(row)
                case .failure(let e):
                    failed = true
                    rows.append(["sessionID": l.sessionID, "state": SessionListing.failedState(e), "error": e.description])
                }
            }
            let data = try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print("store: \(store.root)")
            if listing.isEmpty { print("(no sessions)") }
            for l in listing {
                switch l.result {
                case .failure: failed = true
                case .success(let s): if s.damagedRecords > 0 { failed = true }
                }
                print(l.textLine)
            }
        }
        // Unreadable sessions are reported but do not hide the others; the exit code flags them.
        return failed ? 1 : 0
    }
}

/// `facekit sessions delete`: removes sessions completely (refuses live ones).
struct SessionsDeleteCommand: Command {
    static let path = ["sessions", "delete"]
    static let synopsis = "facekit sessions delete <session-id>... [--store DIR]"
    static let abstract = "Delete sessions completely (only those named)."
    let args: ArgumentScanner
    init(arguments: [String]) throws { args = try sessionIDArguments(arguments) }

    func run() throws -> Int32 {
        try forEachNamedSession(args) { store, id in try store.delete(id); print("deleted \(id)"); return true }
    }
}

/// `facekit sessions verify`: checks every record of every log of the named sessions.
struct SessionsVerifyCommand: Command {
    static let path = ["sessions", "verify"]
    static let synopsis = "facekit sessions verify <session-id>... [--store DIR]"
    static let abstract = "Check every record of every log of a session and say what is damaged (exit 0 clean, 1 damaged)."
    let args: ArgumentScanner
    init(arguments: [String]) throws { args = try sessionIDArguments(arguments) }

    func run() throws -> Int32 {
        try forEachNamedSession(args) { store, id in
            let v = try store.verify(id)
            for line in v.lines { print("\(id): \(line)") }
            print("\(id): \(v.isClean ? "clean" : "damaged")")
            return v.isClean
        }
    }
}

/// `facekit sessions record-synthetic`: records deterministic synthetic frames (SyntheticFrames)
/// through the real recorder. For demos, the fault trials (scripts/tests/20-storage-*.sh) and
/// checking a store without a camera.
struct SessionsRecordSyntheticCommand: Command {
    static let path = ["sessions", "record-synthetic"]
    static let synopsis = "facekit sessions record-synthetic --participant P [--frames N] [--fps 30] [--speed X] [--vertices MODE] [--images-every N] [--flush-ms MS] [--seed S] [--events K] [--pause-at N] [--report-flushes] [--store DIR]"
    static let abstract = "Record a synthetic session through the real recorder (tests, demos)."
    let args: ArgumentScanner
    init(arguments: [String]) throws {
        args = try ArgumentScanner(arguments, valueOptions: ["store", "participant", "frames", "fps", "speed", "vertices", "images-every",
                                                             "flush-ms", "seed", "events", "pause-at", "queue"],
                                   flagOptions: ["report-flushes"])
        guard args.positionals.isEmpty else { throw UsageError("unexpected argument '\(args.positionals[0])'") }
    }

    func run() throws -> Int32 {
        let participant = args.value("participant") ?? "SYNTH"
        do { try SessionStore.validateParticipant(participant) } catch { throw UsageError("--participant: \(error.message)") }
        let store = try openStore(args)
        let frames = try args.int("frames", default: 300)
        let fps = Double(args.value("fps") ?? "30") ?? 30
        // Pacing: --speed 1 is real time; 0 (default) means as fast as the writer accepts.
        let speed = Double(args.value("speed") ?? "0") ?? 0
        let seed = Int64(try args.int("seed", default: 1))
        let events = try args.int("events", default: 3)
        let pauseAt = try args.int("pause-at", default: -1)
        let mode = try VertexMode(parsing: args.value("vertices") ?? "all-f16")
        let config = SessionConfig(vertices: mode, imageEveryNth: try args.int("images-every", default: 0),
                                   flushIntervalMs: try args.int("flush-ms", default: 1000),
                                   queueCapacity: try args.int("queue", default: 256),
                                   extra: ["source": "synthetic", "seed": String(seed), "fps": String(fps)])
        let report = args.flag("report-flushes")
        var onFlush: (@Sendable (Int) -> Void)? = nil
        if report { onFlush = { @Sendable (n: Int) in sayLine("durable \(n)") } }
        let recorder = try store.create(participant: participant, device: ["model": "synthetic"], config: config,
                                        onFlush: onFlush)
        Self.say("session \(recorder.sessionID)")
        let gen = SyntheticFrames(seed: seed, startNs: Int64(MonotonicClock.now()), fps: fps)
        var record = FrameRecord()
        var pixels: [UInt8] = []
        let (w, h) = (64, 48)
        let t0 = Int64(MonotonicClock.now())
        var dropped = 0
        var i: Int64 = 0
        var written = 0
        while written < frames {
            if speed > 0 {
                let due = t0 + Int64(Double(i) * Double(gen.periodNs) / speed)
                let now = Int64(MonotonicClock.now())
                if due > now { MonotonicClock.sleep(nanoseconds: UInt64(min(1_000_000_000, due - now))) ; continue }
            }
            gen.fill(&record, index: i)
            let step = Int64(max(1, frames / max(1, events)))
            if events > 0 && frames >= events && i % step == step / 2 && i / step < Int64(events) {
                recorder.addEvent("marker_\(i)", source: "cli", monotonicNs: record.monotonicNs)
            }
            if Int(i) == pauseAt {
                try recorder.pause(); try recorder.resume()
            }
            let result: SessionRecorder.AppendResult
            if config.imageEveryNth > 0 && i % Int64(config.imageEveryNth) == 0 {
                SyntheticFrames.image(width: w, height: h, index: i, into: &pixels)
                let img = { (p: UnsafeRawBufferPointer) in ImageRef(pixels: p, width: w, height: h, components: 3) }
                result = pixels.withUnsafeBytes { speed > 0 ? recorder.append(record, image: img($0)) : recorder.appendWaiting(record, image: img($0)) }
            } else {
                // Paced runs behave like a camera (drop when the writer is behind); unpaced runs wait.
                result = speed > 0 ? recorder.append(record) : recorder.appendWaiting(record)
            }
            switch result {
            case .queued: written += 1; i += 1
            case .dropped:
                dropped += 1; i += 1
            case .paused: i += 1
            case .stopped:
                do { try recorder.stop() } catch { printError("facekit: recording stopped: \(error)"); return 1 }
                return 1
            }
        }
        let summary = try recorder.stop()
        Self.say("stopped \(summary.sessionID) frames=\(summary.frameCount) dropped=\(dropped)")
        return 0
    }

    static func say(_ s: String) { sayLine(s) }
}

/// Unbuffered line to stdout: the fault trials read it from a pipe while the process may die.
/// Nonisolated free function: it is called on the recorder's writer thread.
nonisolated func sayLine(_ s: String) {
    let line = s + "\n"
    _ = Array(line.utf8).withUnsafeBytes { Syscalls.writeAll(1, $0) }
}
